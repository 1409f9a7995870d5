package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// A LAN capture (four endpoints in one /24): the default mapping puts them on one
// rack, which the run warns about, naming --hosts spread; run.json host_mapping shows
// one rack used. --hosts spread puts them on four racks, without a warning. A CSV
// file that maps each conversation onto one host warns after the run that nothing
// entered the fabric.
func TestHostMappingWarnings(t *testing.T) {
	lan := []string{"192.168.0.1", "192.168.0.2", "192.168.0.3", "192.168.0.4"}
	var pkts []tracegen.Packet
	for i := 0; i < 8; i++ {
		src, dst := lan[i%4], lan[(i+1)%4]
		if i >= 4 { // the second half: 1 <-> 2 and 3 <-> 4 only
			src, dst = lan[2*(i%2)], lan[2*(i%2)+1]
		}
		pkts = append(pkts, tracegen.Packet{Time: units.Time(i) * units.Microsecond, Src: addr(src), Dst: addr(dst),
			Proto: layers.IPProtocolUDP, SrcPort: 1000, DstPort: 2000, Length: 500})
	}
	trace := writeTrace(t, pkts)
	run := func(hosts string, data []tracegen.Packet) (*records.Run, []string) {
		t.Helper()
		tr := trace
		if data != nil {
			tr = writeTrace(t, data)
		}
		var warns []string
		opt := Options{Traces: []string{tr}, Hosts: hosts, Warn: func(s string) { warns = append(warns, s) }}
		pr, err := Prepare(opt)
		if err != nil {
			t.Fatal(err)
		}
		r, err := pr.Run(filepath.Join(t.TempDir(), "run"), "")
		if err != nil {
			t.Fatal(err)
		}
		return r, warns
	}
	r, warns := run("", nil)
	if len(warns) != 1 || !strings.Contains(warns[0], "all 4 endpoints to rack rack-p0-r0") || !strings.Contains(warns[0], "--hosts spread") {
		t.Errorf("subnet: warnings %q", warns)
	}
	hm := r.HostMapping
	if hm == nil || hm.Mode != MapSubnet || hm.Endpoints != 4 || hm.RacksUsed != 1 || hm.HostsUsed != 4 || len(hm.Racks) != 8 ||
		hm.Racks[0] != (records.MappedRack{Name: "rack-p0-r0", Hosts: 16, Endpoints: 4, HostsUsed: 4}) || hm.Warning != warns[0] ||
		hm.Subnet == nil || *hm.Subnet != (records.SubnetGroups{Groups: 1}) {
		t.Errorf("subnet: host_mapping %+v", hm)
	}
	r, warns = run(MapSpread, nil)
	if len(warns) != 0 {
		t.Errorf("spread: warnings %q", warns)
	}
	if hm := r.HostMapping; hm.RacksUsed != 4 || hm.Subnet != nil || hm.Racks[3].Endpoints != 1 || hm.Racks[4].Endpoints != 0 {
		t.Errorf("spread: host_mapping %+v", hm)
	}
	// Each conversation on a host of its own: 1 and 2 on h0, 3 and 4 on h1.
	csv := filepath.Join(t.TempDir(), "pairs.csv")
	os.WriteFile(csv, []byte("192.168.0.1,host-p0-r0-h0\n192.168.0.2,host-p0-r0-h0\n192.168.0.3,host-p1-r0-h1\n192.168.0.4,host-p1-r0-h1\n"), 0o644)
	r, warns = run(csv, pkts[4:])
	if len(warns) != 1 || !strings.Contains(warns[0], "both ends of every one of the 4 replayed packets to one host") {
		t.Errorf("CSV pairs: warnings %q", warns)
	}
	if r.Simulation.Injected != 0 || r.HostMapping.HostsUsed != 0 {
		t.Errorf("CSV pairs: injected %d, %d hosts used", r.Simulation.Injected, r.HostMapping.HostsUsed)
	}
}
