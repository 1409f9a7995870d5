package records_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
)

// A run writes its records into an OutputDir and commits run.json at the end.
func ExampleNewDropsWriter() {
	tmp, _ := os.MkdirTemp("", "records-example")
	defer os.RemoveAll(tmp)

	out, err := records.CreateOutputDir(filepath.Join(tmp, "demo"))
	if err != nil {
		fmt.Println(err)
		return
	}
	dicts := records.Dictionaries{Nodes: []string{"host-p0-r0-h0", "host-p0-r0-h1", "rack-p0-r0"}}
	w, err := records.NewDropsWriter(out.Path(records.DropsFile), dicts)
	if err != nil {
		fmt.Println(err)
		return
	}
	row := records.DropRow{ // reuse one row value: Append copies what it needs
		TimePs: 1_250_000, Node: 2, Tier: records.TierRack, Port: 1, TC: 0,
		Reason: records.ReasonEgressLimit, FlowID: 7, Src: ipaddr.MustParse("10.0.0.1"), Dst: ipaddr.MustParse("10.0.0.2"),
		Proto: 17, Sport: 4791, Dport: 4791, Bytes: 1500, TraceIndex: 41,
	}
	for i := range 3 {
		row.TimePs += 1_000_000
		row.TraceIndex = int64(41 + i)
		if err := w.Append(&row); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	run := &records.Run{Version: "dev", Seed: 1, HashMethod: records.HashCRC32WithSalt,
		Records: map[string]int64{records.DropsFile: w.Rows()}}
	run.Simulation.Dropped = map[records.DropReason]int64{records.ReasonEgressLimit: w.Rows()}
	if err := out.Commit(run); err != nil {
		fmt.Println(err)
		return
	}

	got, err := records.ReadRun(out.Final())
	fmt.Println("complete:", got.Complete, "drops:", got.Records[records.DropsFile], "err:", err)
	// Output:
	// complete: true drops: 3 err: <nil>
}

// Analysis streams a record file row by row; node columns are indices into Nodes.
func ExampleOpenDrops() {
	tmp, _ := os.MkdirTemp("", "records-example")
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, records.DropsFile)
	w, _ := records.NewDropsWriter(path, records.Dictionaries{Nodes: []string{"host-p0-r0-h0", "rack-p0-r0"}})
	w.Append(&records.DropRow{TimePs: 5_000_000, Node: 1, Tier: records.TierRack, Reason: records.ReasonHeadroom,
		Src: ipaddr.MustParse("10.0.0.1"), Dst: ipaddr.MustParse("10.0.1.1"), Proto: 6, Sport: 80, Dport: 5555, Bytes: 9000})
	w.Append(&records.DropRow{TimePs: 6_000_000, Node: 1, Tier: records.TierRack, Reason: records.ReasonHeadroom,
		Src: ipaddr.MustParse("2001:db8:0:0:1::1"), Dst: ipaddr.MustParse("2001:db8::2"), Proto: 17, Sport: 49152, Dport: 4791, Bytes: 4160})
	w.Close()

	rd, err := records.OpenDrops(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rd.Close()
	var row records.DropRow
	for rd.Next(&row) {
		fmt.Printf("%d ps %s %s %v -> %v %d bytes\n", row.TimePs, rd.Nodes()[row.Node], row.Reason,
			row.Src, row.Dst, row.Bytes)
	}
	if err := rd.Err(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 5000000 ps rack-p0-r0 headroom 10.0.0.1 -> 10.0.1.1 9000 bytes
	// 6000000 ps rack-p0-r0 headroom 2001:db8::1:0:0:1 -> 2001:db8::2 4160 bytes
}

// ReadAll reads a small file whole; packet paths come back as node indices.
func ExampleReadAll() {
	tmp, _ := os.MkdirTemp("", "records-example")
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, records.PacketsFile)
	nodes := []string{"host-p0-r0-h0", "rack-p0-r0", "host-p0-r0-h1"}
	w, _ := records.NewPacketsWriter(path, records.Dictionaries{Nodes: nodes})
	w.Append(&records.PacketRow{TraceIndex: 0, InjectPs: 0, DeliverPs: 2_100_000, Fate: records.FateDelivered,
		Path: []int32{0, 1, 2}})
	w.Append(&records.PacketRow{TraceIndex: 1, InjectPs: 10, DeliverPs: -1, Fate: records.FateDropped,
		Path: []int32{0, 1}})
	w.Close()

	rows, names, err := records.ReadAll(records.OpenPackets(path))
	for _, r := range rows {
		fmt.Println(r.TraceIndex, r.Fate, r.DeliverPs, r.Path, "ends at", names[r.Path[len(r.Path)-1]])
	}
	fmt.Println(err)
	// Output:
	// 0 delivered 2100000 [0 1 2] ends at host-p0-r0-h1
	// 1 dropped -1 [0 1] ends at rack-p0-r0
	// <nil>
}

// An interrupted run is refused with ErrIncomplete.
func ExampleReadRun() {
	tmp, _ := os.MkdirTemp("", "records-example")
	defer os.RemoveAll(tmp)
	// A run directory while the run is still writing it (or after a crash) says
	// complete=false.
	out, _ := records.CreateOutputDir(filepath.Join(tmp, "demo"))
	_, err := records.ReadRun(out.Dir())
	fmt.Println(errors.Is(err, records.ErrIncomplete))
	out.Abort() // e.g. the simulation failed: the temporary directory goes
	// Output:
	// true
}
