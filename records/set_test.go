package records

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestWriterSet(t *testing.T) {
	for _, packets := range []bool{false, true} {
		out, err := CreateOutputDir(filepath.Join(t.TempDir(), "run"))
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewWriterSet(out.Dir(), testNodes, packets, WithBatchRows(2))
		if err != nil {
			t.Fatal(err)
		}
		if (s.Packets != nil) != packets {
			t.Fatalf("packets=%v: Packets writer %v", packets, s.Packets)
		}
		for i := range 3 {
			d, f := genDrop(i), genFlow(i)
			if err := s.Drops.Append(&d); err != nil {
				t.Fatal(err)
			}
			if err := s.Flows.Append(&f); err != nil {
				t.Fatal(err)
			}
		}
		if packets {
			p := genPacket(0)
			if err := s.Packets.Append(&p); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := s.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{PortsFile: 0, DropsFile: 3, PFCFile: 0, BufferFile: 0, LoadBalanceFile: 0,
			FlowsFile: 3, MessagesFile: 0, DelayFile: 0}
		if packets {
			want[PacketsFile] = 1
		}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("packets=%v: rows %v, want %v", packets, rows, want)
		}
		run := sampleRun()
		run.Records = rows
		if err := out.Commit(run); err != nil {
			t.Fatal(err)
		}
		for name, n := range want { // every file is a complete record file with its rows
			tbl, err := ReadTable(filepath.Join(out.Final(), name))
			if err != nil {
				t.Fatal(err)
			}
			if tbl.NumRows() != n {
				t.Errorf("%s: %d rows, want %d", name, tbl.NumRows(), n)
			}
			tbl.Release()
		}
	}
	if _, err := NewWriterSet(filepath.Join(t.TempDir(), "missing"), testNodes, true); err == nil {
		t.Error("writer set in a missing directory accepted")
	}
}
