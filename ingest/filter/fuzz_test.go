package filter

import (
	"errors"
	"testing"
)

// FuzzParse: no input makes Parse or Match panic; an error is a *SyntaxError whose
// column holds its token; an expression that parses, and "not (it)", select
// complementary packets, and its String parses to the same filter. The corpus is in
// testdata/fuzz/FuzzParse (go test -fuzz FuzzParse ./ingest/filter).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"tcp", "host 10.0.0.1 and not 10.0.0.2", "tcp dst port 80 or 443", "(ip6 and udp) || !icmp",
		"src or dst net 10.1", "dscp af31", "portrange 1-2", "ip6 proto 58", "tcp or udp and port 1", "((((", "&", "net ::/0",
		"src and dst host ::1", "port 65535", "net 10.0.0.1/33", "ip host 2001:db8::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Parse(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %T %v, want a *SyntaxError", expr, err, err)
			}
			if se.Column < 1 || se.Column > len(expr)+1 {
				t.Fatalf("Parse(%q): column %d outside the expression", expr, se.Column)
			}
			if se.Token != "" && (se.Column-1+len(se.Token) > len(expr) || expr[se.Column-1:se.Column-1+len(se.Token)] != se.Token) {
				t.Fatalf("Parse(%q): column %d does not hold %q", expr, se.Column, se.Token)
			}
			return
		}
		neg, nerr := Parse("not (" + expr + ")")
		again, aerr := Parse(flt.String())
		if aerr != nil {
			t.Fatalf("String() %q of %q does not parse: %v", flt.String(), expr, aerr)
		}
		for _, pk := range packets {
			m := flt.Match(pk.p)
			if nerr == nil && neg.Match(pk.p) == m {
				t.Fatalf("%q and its negation agree on %s", expr, pk.name)
			}
			if again.Match(pk.p) != m {
				t.Fatalf("%q and its String differ on %s", expr, pk.name)
			}
		}
	})
}
