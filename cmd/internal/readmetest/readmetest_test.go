package readmetest

import (
	"reflect"
	"testing"
)

func TestBlocks(t *testing.T) {
	readme := "text\n```\n$ go run ./cmd/x a b\nout 1\nout 2\n$ go run ./cmd/x c\n```\n```\n$ go run ./cmd/y z\n```\n```sh\ngo run ./cmd/x q\n```\n"
	got := Blocks(readme, "./cmd/x")
	want := []Block{{Start: 2, End: 6, Examples: []Example{
		{Line: "go run ./cmd/x a b", Args: []string{"a", "b"}, Output: []string{"out 1", "out 2"}},
		{Line: "go run ./cmd/x c", Args: []string{"c"}},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestCommandArgs(t *testing.T) {
	for line, want := range map[string]struct {
		args   []string
		merged bool
	}{
		"go run ./cmd/x run a.pcap -o out/a":                          {[]string{"run", "a.pcap", "-o", "out/a"}, false},
		"go run ./cmd/x inspect a.pcap --filter 'tcp port 2049' 2>&1": {[]string{"inspect", "a.pcap", "--filter", "tcp port 2049"}, true},
		`go run ./cmd/x run --set "DscpToTc={24: 0}" x # a comment`:   {[]string{"run", "--set", "DscpToTc={24: 0}", "x"}, false},
	} {
		args, merged := commandArgs(line)
		if !reflect.DeepEqual(args, want.args) || merged != want.merged {
			t.Errorf("%q: %q %v, want %q %v", line, args, merged, want.args, want.merged)
		}
	}
}

func TestCommandWriting(t *testing.T) {
	readme := "```sh\nx run a.pcap -o out/a   # installed\n```\n```\n$ go run ./cmd/x run b.pcap --out out/b --hash all 2>&1\nprinted\n$ go run ./cmd/x run a.pcap -o out/a\n```\n"
	for dir, want := range map[string][]string{"out/a": {"run", "a.pcap", "-o", "out/a"}, "out/b": {"run", "b.pcap", "--out", "out/b", "--hash", "all"}, "out/c": nil} {
		args, ok, err := CommandWriting(readme, "./cmd/x", dir)
		if err != nil || ok != (want != nil) || !reflect.DeepEqual(args, want) {
			t.Errorf("%s: %q %v %v, want %q", dir, args, ok, err, want)
		}
	}
	if _, _, err := CommandWriting(readme+"x run c.pcap -o out/a\n", "./cmd/x", "out/a"); err == nil {
		t.Error("two commands writing out/a: no error")
	}
}
