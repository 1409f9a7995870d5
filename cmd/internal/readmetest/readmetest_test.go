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
