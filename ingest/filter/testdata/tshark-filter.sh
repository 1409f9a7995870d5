#!/bin/sh
# tshark-filter.sh DIR: for each pair below, a --filter expression and the tshark
# display filter that selects the same packets, the number of frames tshark selects
# in the capture DIR/FILE (DIR: ../shared/pcaps). filter_test.go's
# TestFilterCountsMatchTshark replays the expression through ingest and compares
# with the lines this script printed into tshark-filter.tsv:
#
#	sh ingest/filter/testdata/tshark-filter.sh ../shared/pcaps > ingest/filter/testdata/tshark-filter.tsv
#
# (run from the repository root; tshark 4.0.17, Debian 12). IP reassembly is off, so
# every fragment is a frame of its own. The display filters say what the filter
# means on the outer header only (ingest reads no tunnel, quote or payload): the
# layer operator #1 picks the outermost ip or ipv6 layer's field; a protocol word is
# the outer IPv4 header's protocol (ip.proto#1), so that the IPv4 and UDP headers an
# ICMP error quotes and the non-first fragments (tshark decodes no UDP there; ingest
# counts them as UDP without ports) are handled as ingest handles them; in these
# captures no IPv6 packet carries a tunnel or an ICMPv6 error, so an IPv6 protocol
# is its header's (tcp, icmpv6); an IPv6 packet that is the outer header is ipv6 &&
# !ip where IPv4 carries IPv6 (lan-ftp's 6 Teredo frames, IPv6 in UDP in IPv4, are
# IPv4 UDP packets to ingest). "not" is taken among the IP frames: (ip || ipv6) &&
# !(...), since the filter sees no ARP.
set -eu
dir=${1:?usage: tshark-filter.sh DIR}
printf '# tshark-filter.sh output (%s)\n' "$(tshark --version 2>/dev/null | head -n 1)"
printf 'file\tfilter\ttshark_display_filter\tpackets\n'
T='(ip.proto#1 == 6 || (ipv6 && tcp))'
U='(ip.proto#1 == 17 || (ipv6 && udp))'
out=$(mktemp)
trap 'rm -f "$out"' EXIT
while IFS='@' read -r file ours theirs; do
	[ -n "$file" ] || continue
	if ! tshark -n -r "$dir/$file" -o ip.defragment:FALSE -o ipv6.defragment:FALSE -Y "$theirs" -T fields -e frame.number >"$out" 2>/dev/null; then
		echo "tshark-filter.sh: tshark refused the display filter $theirs" >&2
		exit 1
	fi
	printf '%s\t%s\t%s\t%d\n' "$file" "$ours" "$theirs" "$(wc -l <"$out")"
done <<PAIRS
tls-browsing-dscp8-38-46-ipv6.pcap@ip@ip
tls-browsing-dscp8-38-46-ipv6.pcap@ip6@ipv6
tls-browsing-dscp8-38-46-ipv6.pcap@tcp@$T
tls-browsing-dscp8-38-46-ipv6.pcap@dscp 46@ip.dsfield.dscp#1 == 46 || ipv6.tclass.dscp#1 == 46
tls-browsing-dscp8-38-46-ipv6.pcap@dscp ef or af43@ip.dsfield.dscp#1 in {46, 38} || ipv6.tclass.dscp#1 in {46, 38}
tls-browsing-dscp8-38-46-ipv6.pcap@ip6 and dscp cs1@ipv6.tclass.dscp#1 == 8
tls-browsing-dscp8-38-46-ipv6.pcap@host 192.168.0.17@ip.addr#1 == 192.168.0.17
tls-browsing-dscp8-38-46-ipv6.pcap@src net 2601:647:4b02:1d20::/64@ipv6.src#1 == 2601:647:4b02:1d20::/64
tls-browsing-dscp8-38-46-ipv6.pcap@dst host 2620:1ec:c11::200 or 2001:558:feed:443::14@ipv6.dst#1 in {2620:1ec:c11::200, 2001:558:feed:443::14}
tls-browsing-dscp8-38-46-ipv6.pcap@tcp dst port 443@$T && tcp.dstport#1 == 443
tls-browsing-dscp8-38-46-ipv6.pcap@not (ip6 and dst port 443)@(ip || ipv6) && !(ipv6 && (($T && tcp.dstport#1 == 443) || ($U && udp.dstport#1 == 443)))
tls-browsing-dscp8-38-46-ipv6.pcap@tcp src port 443 && (net 138.91.0.0/16 || ip6 net 2607:f8b0::/32)@$T && tcp.srcport#1 == 443 && (ip.addr#1 == 138.91.0.0/16 || ipv6.addr#1 == 2607:f8b0::/32)
tls-browsing-dscp8-38-46-ipv6.pcap@portrange 49600-49700@$T && tcp.port#1 in {49600..49700}
afs-rx-fragments-dscp48.pcap@udp@ip.proto#1 == 17
afs-rx-fragments-dscp48.pcap@udp port 7001@ip.proto#1 == 17 && udp.port#1 == 7001
afs-rx-fragments-dscp48.pcap@portrange 7000-7010@ip.proto#1 == 17 && udp.port#1 in {7000..7010}
afs-rx-fragments-dscp48.pcap@icmp@ip.proto#1 == 1
afs-rx-fragments-dscp48.pcap@dscp 48@ip.dsfield.dscp#1 == 48
afs-rx-fragments-dscp48.pcap@not udp@ip && ip.proto#1 != 17
afs-rx-fragments-dscp48.pcap@src host 131.151.1.146 and dst port 7001@ip.src#1 == 131.151.1.146 && ip.proto#1 == 17 && udp.dstport#1 == 7001
afs-rx-fragments-dscp48.pcap@src host 131.151.1.146 and not port 7001@ip.src#1 == 131.151.1.146 && !(ip.proto#1 == 17 && udp.port#1 == 7001)
afs-rx-fragments-dscp48.pcap@dst net 131.151.32@ip.dst#1 == 131.151.32.0/24
afs-rx-fragments-dscp48.pcap@udp and not (port 7000 or 7001)@ip.proto#1 == 17 && !(udp.port#1 in {7000, 7001})
lan-ftp-225-flows-ipv6-arp.pcap@ip6@ipv6 && !ip
lan-ftp-225-flows-ipv6-arp.pcap@icmp6@ipv6 && icmpv6 && !ip
lan-ftp-225-flows-ipv6-arp.pcap@ip6 proto 58@ipv6 && icmpv6 && !ip
lan-ftp-225-flows-ipv6-arp.pcap@not ip6 and not tcp@ip && ip.proto#1 != 6
lan-ftp-225-flows-ipv6-arp.pcap@tcp port 21 or 20@ip.proto#1 == 6 && tcp.port#1 in {20, 21}
lan-ftp-225-flows-ipv6-arp.pcap@proto 2@ip.proto#1 == 2
lan-ftp-225-flows-ipv6-arp.pcap@udp dst port 1900@ip.proto#1 == 17 && udp.dstport#1 == 1900
lan-ftp-225-flows-ipv6-arp.pcap@src and dst net 192.168.0.0/24@ip.src#1 == 192.168.0.0/24 && ip.dst#1 == 192.168.0.0/24
lan-ftp-225-flows-ipv6-arp.pcap@dscp 0@ip.dsfield.dscp#1 == 0 || ipv6.tclass.dscp#1 == 0
web-client-508-flows-qinq.pcap@udp port 53@ip.proto#1 == 17 && udp.port#1 == 53
web-client-508-flows-qinq.pcap@icmp@ip.proto#1 == 1
web-client-508-flows-qinq.pcap@tcp and not (dst port 80 or dst port 443)@ip.proto#1 == 6 && !(tcp.dstport#1 in {80, 443})
web-client-508-flows-qinq.pcap@host 10.0.0.1 and (tcp dst port 80 or udp)@ip.addr#1 == 10.0.0.1 && ((ip.proto#1 == 6 && tcp.dstport#1 == 80) || ip.proto#1 == 17)
PAIRS
