package records

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

var update = flag.Bool("update", false, "rewrite testdata/schemas.golden")

var testNodes = Dictionaries{Nodes: []string{
	"host-p0-r0-h0", "host-p0-r0-h1", "host-p1-r0-h0", "rack-p0-r0", "rack-p1-r0",
	"fabric-p0-f0", "fabric-p1-f0", "spine-s0-0",
}}

// ip is an IPv4 address, or with v6 an IPv6 address in 2001:db8::/32 (RFC 5952 text
// with the zero run in the middle: 2001:db8::1:0:0:a0b).
func ip(i int, v6 bool) ipaddr.Addr {
	if v6 {
		return ipaddr.From16([16]byte{0x20, 0x01, 0x0d, 0xb8, 9: 1, 14: byte(i >> 8), 15: byte(i)})
	}
	return ipaddr.From4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
}

// Row generators: deterministic rows that visit every enumeration value, node and
// edge case (nulls, -1, empty counters) as i goes.

func genPort(i int) PortRow {
	r := PortRow{Node: int32(i % 8), Tier: Tier(i % int(NumTiers)), Port: int32(i % 5), Peer: int32((i + 3) % 8),
		TC: uint8(i % 8), RxPackets: int64(i), RxBytes: int64(i) * 1500, TxPackets: int64(i) + 1, TxBytes: int64(i) * 9018,
		ECNMarked: int64(i / 2), QueueWatermarkBytes: int64(i) * 256, PFCPauseTx: int64(i % 3), PFCResumeTx: int64(i % 2),
		PFCPauseRx: int64(i % 4), PFCResumeRx: int64(i % 5), PausedPs: int64(i) * 335_544_320}
	for k := range r.Drops {
		r.Drops[k] = int64(i*(k+1)) % 7
	}
	return r
}

func genDrop(i int) DropRow {
	return DropRow{TimePs: int64(i) * 1_000_003, Node: int32(i % 8), Tier: Tier(i % int(NumTiers)), Port: int32(i % 33),
		TC: uint8(i % 8), Reason: DropReason(i % int(NumDropReasons)), FlowID: int64(i / 3), Src: ip(i, i%3 == 0), Dst: ip(255-i%256, i%3 == 0),
		Proto: []uint8{6, 17, 1}[i%3], Sport: uint16(i * 7), Dport: uint16(65535 - i), Bytes: int32(64 + i%9000),
		TraceIndex: int64(i) * 2}
}

func genPFC(i int) PFCRow {
	return PFCRow{TimePs: int64(i) * 167_772_160, Node: int32(i % 8), Port: int32(i % 4), Peer: int32((i + 1) % 8),
		TC: uint8(3 + i%2), Event: PFCEventKind(i % int(NumPFCEventKinds)), Quanta: uint16([]int{65535, 0}[i%2])}
}

func genBuffer(i int) BufferRow {
	return BufferRow{TimePs: int64(i) * 100_000_000, Node: int32(3 + i%5), Pool: uint8(i % 2),
		SharedBytes: int64(i) * 256, HeadroomBytes: int64(i%3) * 256, IngressBytes: int64(i) * 512, EgressBytes: int64(i) * 300}
}

func genLoadBalance(i int) LoadBalanceRow {
	return LoadBalanceRow{Node: int32(3 + i%5), Tier: TierRack + Tier(i%3), Set: int32(i % 2), Member: int32(i % 4),
		Port: int32(16 + i%4), Peer: int32(5 + i%3), Flows: int64(i), Flowlets: int64(2 * i), Packets: int64(10 * i),
		Bytes: int64(15000 * i), MovedIn: int64(i % 3), MovedOut: int64(i % 2), HashMethod: HashMethod(i % int(NumHashMethods))}
}

func genFlow(i int) FlowRow {
	r := FlowRow{FlowID: int64(i), Src: ip(i, i%3 == 1), Dst: ip(i+1, i%3 == 1), Proto: 17, Sport: uint16(49152 + i), Dport: 4791,
		DSCP: uint8(i % 64), TC: uint8(i%64) >> 3, SrcHost: int32(i % 3), DstHost: int32((i + 1) % 3),
		Packets: int64(i%5) + 1, Bytes: int64(i%5+1) * 1000, FirstPs: int64(i) * 1000, LastPs: int64(i)*1000 + 500,
		RackMember: int32(i%5) - 1, FabricMember: int32(i%4) - 1, PathChanges: int64(i % 3)}
	switch i % 4 {
	case 0: // nothing delivered: delays null, zero when read back
		r.Dropped, r.Undrained = r.Packets-1, 1
	default:
		r.Delivered, r.CEMarked = r.Packets, int64(i%2)
		r.DelayMinPs, r.DelayMeanPs, r.DelayMaxPs = 5_000_000+int64(i), 6_000_000+int64(i), 9_000_000+int64(i)
	}
	return r
}

func genDelay(i int) DelayRow {
	lo := int64(1) << (i % 40)
	return DelayRow{TC: uint8(i % 8), LoPs: lo, HiPs: 2 * lo, Packets: int64(i * i)}
}

func genMessage(i int) MessageRow {
	r := MessageRow{FlowID: int64(i / 3), Message: int32(i % 3), StartPs: int64(i) * 7_000_000, CapturedPs: int64(i) * 6_000_000,
		Packets: int64(i%4) + 1, SizeBytes: int64(i%4+1) * 1500, FollowsFlowID: -1, FollowsMessage: -1, IdealFctPs: 2_000_000 + int64(i)}
	if i%3 > 0 {
		r.FollowsFlowID, r.FollowsMessage = int64(i/3+1), int32(i%3-1)
	}
	if i%5 == 0 { // not complete: fct null, zero when read back
		r.Completion = CompletionMaxDrain
	} else {
		r.Completion, r.FctPs = CompletionComplete, 3_000_000+int64(i)
	}
	return r
}

func genTransport(i int) TransportRow {
	return TransportRow{TimePs: int64(i) * 4_000_000, FlowID: int64(i % 7), Node: int32(i % 3),
		Event: TransportEventKind(i % int(NumTransportEventKinds)), Value: int64(i) * 1_000_000_007}
}

func genStage(i int) StageRow {
	return StageRow{FlowID: int64(i / 3), Stage: uint8(1 + i%7), Node: int32(i % 3), Set: int32(i % 11), Member: int32(i % 64)}
}

func genPacket(i int) PacketRow {
	r := PacketRow{TraceIndex: int64(i), FlowID: int64(i / 4), TC: uint8(i % 8), Bytes: int32(64 + i%1437),
		InjectPs: int64(i) * 120_000, DeliverPs: -1, Fate: Fate(i % int(NumFates)), Path: []int32{0}}
	switch r.Fate {
	case FateDelivered:
		r.DeliverPs, r.CE = r.InjectPs+7_000_000, i%2 == 1
		r.Path = []int32{0, 3, 5, 7, 6, 4, 2}
	case FateDropped:
		r.Path = []int32{0, 3, 5}[:1+i%3]
	case FateUndrained:
		r.Path = []int32{1, 3}
	}
	return r
}

// fileCase exercises one record file through its writer and reader.
type fileCase[R any] struct {
	name   string
	create func(string, Dictionaries, ...Option) (*Writer[R], error)
	open   func(string) (*Reader[R], error)
	gen    func(int) R
}

// write writes rows gen(0..n-1) with the given batch size and returns the file's path.
func (fc fileCase[R]) write(t testing.TB, dir string, n, batch int) string {
	t.Helper()
	path, err := fc.tryWrite(dir, n, batch)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// tryWrite is write for any goroutine.
func (fc fileCase[R]) tryWrite(dir string, n, batch int) (string, error) {
	path := filepath.Join(dir, fc.name)
	w, err := fc.create(path, testNodes, WithBatchRows(batch))
	if err != nil {
		return "", err
	}
	for i := range n {
		r := fc.gen(i)
		if err := w.Append(&r); err != nil {
			return "", fmt.Errorf("append row %d: %w", i, err)
		}
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if w.Rows() != int64(n) {
		return "", fmt.Errorf("Rows() = %d, want %d", w.Rows(), n)
	}
	return path, nil
}

func (fc fileCase[R]) roundTrip(t *testing.T) {
	for _, tc := range []struct{ n, batch int }{{0, 4}, {1, 4}, {4, 4}, {11, 4}, {1000, 64}} {
		t.Run(fmt.Sprintf("rows=%d/batch=%d", tc.n, tc.batch), func(t *testing.T) {
			path := fc.write(t, t.TempDir(), tc.n, tc.batch)
			rows, nodes, err := ReadAll(fc.open(path))
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.n {
				t.Fatalf("read %d rows, wrote %d", len(rows), tc.n)
			}
			for i, got := range rows {
				if want := fc.gen(i); !reflect.DeepEqual(got, want) {
					t.Fatalf("row %d:\n got %+v\nwant %+v", i, got, want)
				}
			}
			schema, _ := Schema(fc.name)
			if hasNodeColumn(schema) && !reflect.DeepEqual(nodes, testNodes.Nodes) {
				t.Errorf("Nodes() = %q, want %q", nodes, testNodes.Nodes)
			}
			rd, err := fc.open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			if want := max(1, (tc.n+tc.batch-1)/tc.batch); rd.Batches() != want {
				t.Errorf("%d batches, want %d", rd.Batches(), want)
			}
			tbl, err := ReadTable(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tbl.Release()
			if tbl.NumRows() != int64(tc.n) || !tbl.Schema().Equal(schema) {
				t.Errorf("ReadTable: %d rows, schema %s; want %d rows, %s", tbl.NumRows(), tbl.Schema(), tc.n, schema)
			}
		})
	}
}

func hasNodeColumn(s *arrow.Schema) bool {
	for _, f := range s.Fields() {
		if f.Type.ID() == arrow.DICTIONARY && f.Name != "tier" && f.Name != "reason" && f.Name != "event" &&
			f.Name != "fate" && f.Name != "hash_method" && f.Name != "completion" {
			return true
		}
	}
	return false
}

// cases returns one exercise per record file, as untyped test functions.
type anyCase struct {
	name      string
	roundTrip func(*testing.T)
	write     func(t testing.TB, dir string, n, batch int) string
	tryWrite  func(dir string, n, batch int) (string, error)
}

func cases() []anyCase {
	return []anyCase{
		mk(fileCase[PortRow]{PortsFile, NewPortsWriter, OpenPorts, genPort}),
		mk(fileCase[DropRow]{DropsFile, NewDropsWriter, OpenDrops, genDrop}),
		mk(fileCase[PFCRow]{PFCFile, NewPFCWriter, OpenPFC, genPFC}),
		mk(fileCase[BufferRow]{BufferFile, NewBufferWriter, OpenBuffer, genBuffer}),
		mk(fileCase[LoadBalanceRow]{LoadBalanceFile, NewLoadBalanceWriter, OpenLoadBalance, genLoadBalance}),
		mk(fileCase[FlowRow]{FlowsFile, NewFlowsWriter, OpenFlows, genFlow}),
		mk(fileCase[MessageRow]{MessagesFile, NewMessagesWriter, OpenMessages, genMessage}),
		mk(fileCase[DelayRow]{DelayFile, NewDelayWriter, OpenDelay, genDelay}),
		mk(fileCase[PacketRow]{PacketsFile, NewPacketsWriter, OpenPackets, genPacket}),
		mk(fileCase[TransportRow]{TransportFile, NewTransportWriter, OpenTransport, genTransport}),
		mk(fileCase[StageRow]{StagesFile, NewStagesWriter, OpenStages, genStage}),
	}
}

func mk[R any](fc fileCase[R]) anyCase { return anyCase{fc.name, fc.roundTrip, fc.write, fc.tryWrite} }

func TestRoundTrip(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, c.roundTrip)
	}
}

func TestCasesCoverEveryFile(t *testing.T) {
	var names []string
	for _, c := range cases() {
		names = append(names, c.name)
	}
	if !reflect.DeepEqual(names, Files()) {
		t.Fatalf("test cases %q, files %q", names, Files())
	}
}

// TestDictionaryStability reads multi-batch files with the Arrow IPC reader itself:
// one dictionary per dictionary field for the whole file (the IPC file format allows
// no replacement), and every batch's dictionary values are the expected ones.
func TestDictionaryStability(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			path := c.write(t, t.TempDir(), 100, 7) // 15 batches
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fr, err := ipc.NewFileReader(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fr.Close()
			var dictFields []int
			for i, fl := range fr.Schema().Fields() {
				if fl.Type.ID() == arrow.DICTIONARY {
					dictFields = append(dictFields, i)
				}
			}
			if fr.NumDictionaries() != len(dictFields) {
				t.Errorf("%d dictionaries in the file, want one per dictionary field (%d)", fr.NumDictionaries(), len(dictFields))
			}
			if fr.NumRecords() != 15 {
				t.Fatalf("%d batches, want 15", fr.NumRecords())
			}
			for b := range fr.NumRecords() {
				rec, err := fr.Record(b)
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range dictFields {
					values := rec.Column(j).(*array.Dictionary).Dictionary().(*array.String)
					want := expectedDictionary(c.name, rec.ColumnName(j))
					if got := stringsOf(values); !reflect.DeepEqual(got, want) {
						t.Fatalf("batch %d column %s: dictionary %q, want %q", b, rec.ColumnName(j), got, want)
					}
				}
			}
		})
	}
}

func expectedDictionary(file, column string) []string {
	if file == TransportFile && column == "event" {
		return transportEventNames[:]
	}
	switch column {
	case "tier":
		return tierNames[:]
	case "reason":
		return reasonNames[:]
	case "event":
		return pfcEventNames[:]
	case "fate":
		return fateNames[:]
	case "hash_method":
		return hashMethodNames[:]
	case "kind":
		return packetKindNames[:]
	case "transport":
		return transportNames[:]
	case "completion":
		return completionNames[:]
	case "family":
		return familyNames
	}
	return testNodes.Nodes
}

func stringsOf(a *array.String) []string {
	out := make([]string, a.Len())
	for i := range out {
		out[i] = a.Value(i)
	}
	return out
}

// TestDeterminism: identical rows give byte-identical files.
func TestDeterminism(t *testing.T) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			a, err := os.ReadFile(c.write(t, t.TempDir(), 500, 64))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(c.write(t, t.TempDir(), 500, 64))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Fatalf("two writes of the same rows differ (%d and %d bytes)", len(a), len(b))
			}
		})
	}
}

// TestSchemaGolden pins every file's schema (names, types, nullability, metadata).
// Regenerate with: go test ./records -run TestSchemaGolden -update
func TestSchemaGolden(t *testing.T) {
	var b strings.Builder
	for _, name := range Files() {
		s, err := Schema(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "== %s\n%s\n\n", name, s)
	}
	golden := filepath.Join("testdata", "schemas.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Fatalf("schemas changed; if on purpose, bump SchemaVersion, update docs/records.md and run with -update.\ngot:\n%s", b.String())
	}
}

func TestSchemaMetadata(t *testing.T) {
	for _, name := range Files() {
		s, _ := Schema(name)
		if got := metaValue(s, MetaFile); got != name {
			t.Errorf("%s: %s = %q", name, MetaFile, got)
		}
		if got := metaValue(s, MetaSchemaVersion); got != "3" {
			t.Errorf("%s: %s = %q, want \"3\"", name, MetaSchemaVersion, got)
		}
	}
	if _, err := Schema("nope.arrow"); err == nil {
		t.Error("Schema(nope.arrow) gave no error")
	}
}

func TestBadRowsRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), DropsFile)
	w, err := NewDropsWriter(path, testNodes, WithBatchRows(2))
	if err != nil {
		t.Fatal(err)
	}
	good := genDrop(1)
	bad := []struct {
		name string
		row  DropRow
		msg  string
	}{
		{"node too big", DropRow{Node: 8}, "node 8 out of range [0,8)"},
		{"node negative", DropRow{Node: -1}, "node -1 out of range"},
		{"reason", DropRow{Reason: NumDropReasons}, "drop reason 4 out of range"},
		{"tier", DropRow{Tier: 9}, "tier 9 out of range"},
	}
	for _, b := range bad {
		if err := w.Append(&b.row); err == nil || !strings.Contains(err.Error(), b.msg) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and %q", b.name, err, path, b.msg)
		}
		if err := w.Append(&good); err != nil {
			t.Fatalf("after a rejected row: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&good); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	rows, _, err := ReadAll(OpenDrops(path))
	if err != nil || len(rows) != len(bad) || w.Rows() != int64(len(bad)) {
		t.Fatalf("read %d rows (err %v), Rows() %d, want %d good rows only", len(rows), err, w.Rows(), len(bad))
	}

	// Rejections late in a row (path is the 9th column, after a bool) are undone in
	// every column: the file holds exactly the good rows, across batch boundaries.
	ppath := filepath.Join(t.TempDir(), PacketsFile)
	pw, err := NewPacketsWriter(ppath, testNodes, WithBatchRows(3))
	if err != nil {
		t.Fatal(err)
	}
	var goodPackets []PacketRow
	for i := range 10 {
		p := genPacket(i)
		if err := pw.Append(&p); err != nil {
			t.Fatal(err)
		}
		goodPackets = append(goodPackets, p)
		for _, bad := range [][]int32{{}, {0, 3, 99}, {-1}} {
			b := genPacket(i + 1)
			b.CE = true
			b.Path = bad
			if err := pw.Append(&b); err == nil || !strings.Contains(err.Error(), "column path") {
				t.Errorf("packet with path %v: error %v", bad, err)
			}
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadAll(OpenPackets(ppath))
	if err != nil || !reflect.DeepEqual(got, goodPackets) {
		t.Fatalf("after rejected packets read %d rows (%v), want the %d good ones", len(got), err, len(goodPackets))
	}
}

func TestBitmapPop(t *testing.T) {
	var b bitmap
	want := []bool{true, false, true, true, false, false, true, true, true, false}
	for _, v := range want {
		b.append(v)
	}
	for i := len(want) - 1; i >= 0; i-- {
		if got := b.pop(); got != want[i] || b.n != i || len(b.bits) != (i+7)/8 {
			t.Fatalf("pop %d: %v, n %d, %d bytes", i, got, b.n, len(b.bits))
		}
	}
	b.append(false) // a popped bit does not come back set
	if b.bits[0] != 0 {
		t.Fatalf("bits %08b after pops and a false", b.bits[0])
	}
}

func TestBadDictionaries(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []Dictionaries{
		{Nodes: []string{"a", ""}},
		{Nodes: []string{"a", "b", "a"}},
		{Nodes: []string{"a > b"}},
	} {
		if _, err := NewPFCWriter(filepath.Join(dir, PFCFile), d); err == nil {
			t.Errorf("nodes %q accepted", d.Nodes)
		}
	}
	if _, err := NewPFCWriter(filepath.Join(dir, "missing", PFCFile), testNodes); err == nil ||
		!strings.Contains(err.Error(), "missing") {
		t.Errorf("writer in a missing directory: %v", err)
	}
}

func TestOpenBadFiles(t *testing.T) {
	dir := t.TempDir()
	drops := mk(fileCase[DropRow]{DropsFile, NewDropsWriter, OpenDrops, genDrop}).write(t, dir, 300, 64)
	whole, err := os.ReadFile(drops)
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		path string
		want error
		msg  string
	}{
		{"truncated by half", put("half.arrow", whole[:len(whole)/2]), ErrNotRecordFile, "truncated"},
		{"truncated footer", put("cut.arrow", whole[:len(whole)-3]), ErrNotRecordFile, "truncated"},
		{"empty", put("empty.arrow", nil), ErrNotRecordFile, "truncated"},
		{"foreign", put("text.arrow", bytes.Repeat([]byte("not arrow "), 100)), ErrNotRecordFile, "truncated"},
		{"other kind", put("pfc.arrow", whole), ErrNotRecordFile, "holds drops.arrow, not pfc.arrow"},
		{"other version", rawArrow(t, dir, "1", dropsTable.schema().Fields()), ErrSchemaVersion, "this build reads 2 to 3 (written by an older tracefabric: replay the trace again with this version)"},
		{"newer version", rawArrow(t, dir, "4", dropsTable.schema().Fields()), ErrSchemaVersion, "this build reads 2 to 3 (written by a newer tracefabric"},
		{"other columns", rawArrow(t, dir, "3", dropsTable.schema().Fields()[:3]), ErrNotRecordFile, "column 3 \"port\" is missing"},
		{"missing", filepath.Join(dir, "none.arrow"), os.ErrNotExist, "none.arrow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			open := OpenDrops
			if tc.name == "other kind" {
				_, err := OpenPFC(tc.path)
				check(t, err, tc.path, tc.want, tc.msg)
				return
			}
			rd, err := open(tc.path)
			if err == nil {
				rd.Close()
			}
			check(t, err, tc.path, tc.want, tc.msg)
			_, err = ReadTable(tc.path)
			check(t, err, tc.path, tc.want, "")
		})
	}
}

func check(t *testing.T, err error, path string, want error, msg string) {
	t.Helper()
	if err == nil || !errors.Is(err, want) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), msg) {
		t.Errorf("error %v; want %v naming %s and saying %q", err, want, path, msg)
	}
}

// rawArrow writes an Arrow file with drops metadata but the given version and fields.
func rawArrow(t *testing.T, dir, version string, fields []arrow.Field) string {
	t.Helper()
	md := arrow.NewMetadata([]string{MetaSchemaVersion, MetaFile}, []string{version, DropsFile})
	schema := arrow.NewSchema(fields, &md)
	path := filepath.Join(dir, fmt.Sprintf("raw-%s-%d.arrow", version, len(fields)))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	rec := b.NewRecord()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCorruptBatch flips bytes in a batch body: the reader returns an error, never panics.
func TestCorruptBatch(t *testing.T) {
	dir := t.TempDir()
	path := mk(fileCase[PacketRow]{PacketsFile, NewPacketsWriter, OpenPackets, genPacket}).write(t, dir, 200, 50)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Flip bytes in the record batch bodies around the path strings (offsets and
	// values). Metadata is left alone: a lying flatbuffer length makes the Arrow
	// library allocate whatever it says, which no caller can recover from.
	first := bytes.Index(data, []byte("host-p0-r0-h0 > "))
	if first < 0 {
		t.Fatal("no path string in the file")
	}
	errs := 0
	for off := first - 900; off < first+1200; off += 37 {
		bad := bytes.Clone(data)
		for i := off; i < off+8; i++ {
			bad[i] ^= 0xff
		}
		p := filepath.Join(dir, "bad.arrow")
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadAll(OpenPackets(p))
		if err != nil {
			errs++
			if !strings.Contains(err.Error(), p) || !errors.Is(err, ErrNotRecordFile) {
				t.Fatalf("offset %d: error %v does not name the file or wrap ErrNotRecordFile", off, err)
			}
		} // a flip in a value buffer may read back as other values: that is fine
	}
	t.Logf("%d of the corrupted files gave an error", errs)
	if errs == 0 {
		t.Error("no corruption detected at all")
	}
}

// TestWriteErrorSticky: an I/O error while writing a batch is returned by that
// Append, every later one and Close, naming the file.
func TestWriteErrorSticky(t *testing.T) {
	path := filepath.Join(t.TempDir(), PFCFile)
	w, err := NewPFCWriter(path, testNodes, WithBatchRows(2))
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close() // the disk goes away
	r := genPFC(0)
	if err := w.Append(&r); err != nil {
		t.Fatalf("first row (buffered): %v", err)
	}
	err = w.Append(&r) // fills the batch: written now
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("write to a closed file: %v, want an error naming %s", err, path)
	}
	if err2 := w.Append(&r); err2 != err {
		t.Errorf("later Append: %v, want the same error", err2)
	}
	if err3 := w.Close(); err3 == nil {
		t.Error("Close after a write error returned nil")
	}
}

// TestConcurrentWriters: writers in parallel goroutines (replay --hash all) share no
// mutable state: they produce the same bytes as a lone writer (run with -race).
func TestConcurrentWriters(t *testing.T) {
	c := mk(fileCase[PacketRow]{PacketsFile, NewPacketsWriter, OpenPackets, genPacket})
	want, err := os.ReadFile(c.write(t, t.TempDir(), 700, 64))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()}
	type result struct {
		path string
		err  error
	}
	done := make(chan result)
	for _, d := range dirs {
		go func() {
			p, err := c.tryWrite(d, 700, 64)
			done <- result{p, err}
		}()
	}
	for range dirs {
		r := <-done
		if r.err != nil {
			t.Error(r.err)
			continue
		}
		if got, err := os.ReadFile(r.path); err != nil || !bytes.Equal(got, want) {
			t.Errorf("concurrent writer's file differs (%v)", err)
		}
	}
}

// Every enumeration's names parse back to their values, and an unknown name is an
// error naming the enumeration.
func TestEnumRoundTrips(t *testing.T) {
	check := func(what string, n int, name func(int) string, parse func(string) (int, error)) {
		t.Helper()
		for i := 0; i < n; i++ {
			if got, err := parse(name(i)); err != nil || got != i {
				t.Errorf("%s %q parses as %d, %v", what, name(i), got, err)
			}
		}
		if _, err := parse("nope"); err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: unknown name gave %v", what, err)
		}
	}
	check("drop reason", NumDropReasons, func(i int) string { return DropReason(i).String() },
		func(s string) (int, error) { v, err := ParseDropReason(s); return int(v), err })
	check("tier", NumTiers, func(i int) string { return Tier(i).String() },
		func(s string) (int, error) { v, err := ParseTier(s); return int(v), err })
	check("PFC event", NumPFCEventKinds, func(i int) string { return PFCEventKind(i).String() },
		func(s string) (int, error) { v, err := ParsePFCEventKind(s); return int(v), err })
	check("fate", NumFates, func(i int) string { return Fate(i).String() },
		func(s string) (int, error) { v, err := ParseFate(s); return int(v), err })
	check("hash method", NumHashMethods, func(i int) string { return HashMethod(i).String() },
		func(s string) (int, error) { v, err := ParseHashMethod(s); return int(v), err })
	check("transport", NumTransports, func(i int) string { return Transport(i).String() },
		func(s string) (int, error) { v, err := ParseTransport(s); return int(v), err })
	check("packet kind", NumPacketKinds, func(i int) string { return PacketKind(i).String() },
		func(s string) (int, error) { v, err := ParsePacketKind(s); return int(v), err })
	check("completion", NumCompletions, func(i int) string { return Completion(i).String() },
		func(s string) (int, error) { v, err := ParseCompletion(s); return int(v), err })
	check("transport event", NumTransportEventKinds, func(i int) string { return TransportEventKind(i).String() },
		func(s string) (int, error) { v, err := ParseTransportEventKind(s); return int(v), err })
}

// A reader names its file.
func TestReaderPath(t *testing.T) {
	dir := t.TempDir()
	c := mk(fileCase[DelayRow]{DelayFile, NewDelayWriter, OpenDelay, genDelay})
	path := c.write(t, dir, 3, 10)
	r, err := OpenDelay(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Path() != path {
		t.Errorf("Path %q, want %q", r.Path(), path)
	}
	b, err := OpenBatches(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Path() != path {
		t.Errorf("batch reader Path %q, want %q", b.Path(), path)
	}
}
