package replay

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// TestVocabularyMapsBothWays: every model value that reaches the records maps to a
// distinct schema value spelled the same, every schema value (but the replay's own
// drop reason oversize) is reached, and parsing the schema name gives it back.
func TestVocabularyMapsBothWays(t *testing.T) {
	t.Run("tier", func(t *testing.T) {
		seen := map[records.Tier]bool{}
		for m := config.TierHost; m < config.NumTiers; m++ {
			r := RecordTier(m)
			if r.String() != m.String() || seen[r] {
				t.Errorf("tier %v -> %v", m, r)
			}
			seen[r] = true
			if back, err := records.ParseTier(r.String()); err != nil || back != r {
				t.Errorf("records tier %v parses back as %v, %v", r, back, err)
			}
		}
		if len(seen) != records.NumTiers {
			t.Errorf("%d of %d record tiers reached", len(seen), records.NumTiers)
		}
	})
	t.Run("drop reason", func(t *testing.T) {
		seen := map[records.DropReason]bool{}
		for m := switchmodel.DropReason(0); m < switchmodel.NumDropReasons; m++ {
			r := reasonOf[m]
			if r.String() != m.String() || seen[r] {
				t.Errorf("drop reason %v -> %v", m, r)
			}
			seen[r] = true
			if back, err := records.ParseDropReason(r.String()); err != nil || back != r {
				t.Errorf("records reason %v parses back as %v, %v", r, back, err)
			}
		}
		seen[records.ReasonOversize] = true // the replay's own: dropped at the source host
		if len(seen) != records.NumDropReasons {
			t.Errorf("%d of %d record drop reasons reached", len(seen), records.NumDropReasons)
		}
	})
	t.Run("pfc event kind", func(t *testing.T) {
		seen := map[records.PFCEventKind]bool{}
		for m := switchmodel.PFCEventKind(0); m < switchmodel.NumPFCEventKinds; m++ {
			r := pfcKindOf[m]
			if r.String() != m.String() || seen[r] {
				t.Errorf("PFC event kind %v -> %v", m, r)
			}
			seen[r] = true
			if back, err := records.ParsePFCEventKind(r.String()); err != nil || back != r {
				t.Errorf("records PFC kind %v parses back as %v, %v", r, back, err)
			}
		}
		if len(seen) != records.NumPFCEventKinds {
			t.Errorf("%d of %d record PFC event kinds reached", len(seen), records.NumPFCEventKinds)
		}
	})
	t.Run("transport", func(t *testing.T) {
		seen := map[records.Transport]bool{}
		for m := transport.Kind(0); m < transport.NumKinds; m++ {
			r := transportOf[m]
			if r.String() != m.String() || seen[r] {
				t.Errorf("transport %v -> %v", m, r)
			}
			seen[r] = true
			if back, err := records.ParseTransport(r.String()); err != nil || back != r {
				t.Errorf("records transport %v parses back as %v, %v", r, back, err)
			}
		}
		if len(seen) != records.NumTransports {
			t.Errorf("%d of %d record transports reached", len(seen), records.NumTransports)
		}
	})
	t.Run("transport event", func(t *testing.T) {
		seen := map[records.TransportEventKind]bool{}
		for m := transport.EventKind(0); m < transport.NumEventKinds; m++ {
			r := transportEventOf[m]
			if r.String() != m.String() || seen[r] {
				t.Errorf("transport event %v -> %v", m, r)
			}
			seen[r] = true
			if back, err := records.ParseTransportEventKind(r.String()); err != nil || back != r {
				t.Errorf("records transport event %v parses back as %v, %v", r, back, err)
			}
		}
		if len(seen) != records.NumTransportEventKinds {
			t.Errorf("%d of %d record transport events reached", len(seen), records.NumTransportEventKinds)
		}
	})
	t.Run("packet kind", func(t *testing.T) {
		seen := map[records.PacketKind]bool{}
		for c := switchmodel.OpenData; c < switchmodel.NumClasses; c++ {
			r := kindOf[c]
			if r.String() != c.String() {
				t.Errorf("packet class %v -> %v", c, r)
			}
			seen[r] = true
		}
		if len(seen) != records.NumPacketKinds {
			t.Errorf("%d of %d record packet kinds reached", len(seen), records.NumPacketKinds)
		}
	})
	t.Run("hash method", func(t *testing.T) {
		seen := map[records.HashMethod]bool{}
		for _, m := range ecmp.AllMethods {
			r, err := RecordHashMethod(m)
			if err != nil || r.String() != m.String() || seen[r] {
				t.Errorf("hash method %v -> %v, %v", m, r, err)
			}
			seen[r] = true
			if back, err := records.ParseHashMethod(r.String()); err != nil || back != r {
				t.Errorf("records hash method %v parses back as %v, %v", r, back, err)
			}
		}
		if len(seen) != records.NumHashMethods || len(ecmp.AllMethods) != ecmp.NumMethods {
			t.Errorf("%d of %d record hash methods reached", len(seen), records.NumHashMethods)
		}
		if _, err := RecordHashMethod(ecmp.NumMethods); err == nil {
			t.Error("an unknown hash method maps without error")
		}
	})
}
