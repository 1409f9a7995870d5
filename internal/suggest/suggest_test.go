package suggest

import (
	"fmt"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"port", "port", 0}, {"prot", "port", 1}, {"tpc", "tcp", 1}, {"BufferSise", "BufferSize", 1},
		{"Pod", "Pods", 1}, {"foo", "xon", 2}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"ca", "abc", 3}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestNearest(t *testing.T) {
	attrs := []string{"Xon", "Xoff", "XonOffset", "BufferSize", "Pods", "Mtu"}
	for _, c := range []struct {
		word string
		want string // "" for no suggestion
	}{
		{"Xonn", "Xon"}, {"xon", "Xon"}, {"BufferSise", "BufferSize"}, {"Bufersiz", "BufferSize"}, {"Pod", "Pods"},
		{"Foo", ""}, // two edits from Xon and Mtu: a 3-letter word gets one
		{"Bogus", ""}, {"", ""},
	} {
		got, ok := Nearest(c.word, attrs)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("Nearest(%q) = %q, %v; want %q", c.word, got, ok, c.want)
		}
	}
	if _, ok := Nearest("x", nil); ok {
		t.Error("a suggestion from no words")
	}
}

func ExampleNearest() {
	known := []string{"host", "net", "port", "portrange"}
	for _, w := range []string{"prot", "hots", "bogus"} {
		s, ok := Nearest(w, known)
		fmt.Println(w, s, ok)
	}
	// Output:
	// prot port true
	// hots host true
	// bogus host false
}
