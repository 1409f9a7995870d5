#!/bin/sh
# tshark-ipv6.sh DIR: the IPv6 side of every capture in DIR (../shared/pcaps), as
# tshark counts it, one line per file: file, IPv6 packets, distinct directional
# 5-tuples, DSCP and ECN histograms (value:count, ascending, zero counts left out).
# ingest/expected6_test.go compares `inspect --json` by_family.ipv6 with the lines
# this script printed into ingest/testdata/tshark-ipv6.tsv:
#
#	sh ingest/testdata/tshark-ipv6.sh ../shared/pcaps > ingest/testdata/tshark-ipv6.tsv
#
# An IPv6 packet is a frame whose first network-layer protocol in frame.protocols,
# after the link-layer tokens eth, ethertype, vlan, sll and raw (the rule of
# ../shared/pcaps/PROVENANCE.md for IPv4), is ipv6. Only that outer header counts:
# -E occurrence=f takes the first (outermost) value of each field, and reassembly is
# off so that fragments stay separate packets. The 5-tuple's protocol is the Next
# Header that ends the outer header's extension header chain (Hop-by-Hop 0, Routing
# 43, Fragment 44 unless a non-first fragment, Destination Options 60, AH 51 are
# followed); its ports are those of a TCP or UDP header right after that chain, else
# 0 (docs/model.md#ipv6).
set -eu
dir=${1:?usage: tshark-ipv6.sh DIR}
printf '# tshark-ipv6.sh output (%s)\n' "$(tshark --version 2>/dev/null | head -n 1)"
printf 'file\tipv6_packets\tflows_5tuple\tdscp_histogram\tecn_histogram\n'
for f in "$dir"/*.pcap "$dir"/*.pcapng; do
	[ -e "$f" ] || continue
	tshark -n -r "$f" -o ip.defragment:FALSE -o ipv6.defragment:FALSE -T fields -E separator=/t -E occurrence=f \
		-e frame.protocols -e ipv6.tclass.dscp -e ipv6.tclass.ecn -e ipv6.src -e ipv6.dst -e ipv6.nxt \
		-e ipv6.hopopts.nxt -e ipv6.routing.nxt -e ipv6.fraghdr.nxt -e ipv6.dstopts.nxt -e ah.next_header \
		-e ipv6.fraghdr.offset -e tcp.srcport -e tcp.dstport -e udp.srcport -e udp.dstport 2>/dev/null |
	awk -v file="$(basename "$f")" '
	BEGIN { FS = "\t"; split("eth ethertype vlan sll raw", L, " "); for (k in L) link[L[k]] = 1
	        split("ipv6.hopopts ipv6.routing ipv6.fraghdr ipv6.dstopts ah", X, " "); for (k in X) ext[X[k]] = 1 }
	{
		n = split($1, t, ":"); i = 1
		while (i <= n && (t[i] in link)) i++
		if (t[i] != "ipv6") next
		v6++; dscp[$2]++; ecn[$3]++
		p = $6; later = 0
		for (hops = 0; hops < 16; hops++) {
			if (p == 0) p = $7
			else if (p == 43) p = $8
			else if (p == 44) { p = $9; if ($12 + 0 > 0) { later = 1; break } }
			else if (p == 60) p = $10
			else if (p == 51) p = $11
			else break
		}
		j = i + 1
		while (j <= n && (t[j] in ext)) j++
		sp = 0; dp = 0
		if (!later && p == 6 && t[j] == "tcp" && $13 != "") { sp = $13; dp = $14 }
		else if (!later && p == 17 && t[j] == "udp" && $15 != "") { sp = $15; dp = $16 }
		k = $4 " " $5 " " p " " sp " " dp
		if (!(k in flow)) { flow[k] = 1; nflows++ }
	}
	END {
		printf "%s\t%d\t%d\t", file, v6, nflows
		s = ""; for (d = 0; d < 64; d++) if (d in dscp) { printf "%s%d:%d", s, d, dscp[d]; s = "," }
		printf "\t"
		s = ""; for (e = 0; e < 4; e++) if (e in ecn) { printf "%s%d:%d", s, e, ecn[e]; s = "," }
		printf "\n"
	}'
done
