package replay

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// The one mapping between the model's vocabulary (config.Tier, switchmodel.DropReason
// and PFCEventKind, ecmp.Method) and the records schema's (records.Tier, DropReason,
// PFCEventKind, HashMethod). Each table is indexed by the model's value; vocab_test.go
// checks that every model value maps to a distinct schema value with the same name
// and back, so a value added on one side alone fails the tests instead of being
// recorded as another.

var tierOf = [config.NumTiers]records.Tier{
	config.TierNone:   records.NumTiers, // never recorded: replay builds no switch outside the Clos
	config.TierHost:   records.TierHost,
	config.TierRack:   records.TierRack,
	config.TierFabric: records.TierFabric,
	config.TierSpine:  records.TierSpine,
}

// RecordTier returns the records' tier of a Clos node.
func RecordTier(t config.Tier) records.Tier { return tierOf[t] }

// reasonOf maps the model's drop reasons. A no-route drop without events is a
// topology bug: the replay stops with an error instead.
var reasonOf = [switchmodel.NumDropReasons]records.DropReason{
	switchmodel.DropHeadroom:    records.ReasonHeadroom,
	switchmodel.DropEgressLimit: records.ReasonEgressLimit,
	switchmodel.DropPoolFull:    records.ReasonPoolFull,
	switchmodel.DropNoRoute:     records.ReasonNoRoute,
	switchmodel.DropLinkDown:    records.ReasonLinkDown,
	switchmodel.DropPFCWatchdog: records.ReasonPFCWatchdog,
}

var pfcKindOf = [switchmodel.NumPFCEventKinds]records.PFCEventKind{
	switchmodel.PFCTxPause:          records.EventTxPause,
	switchmodel.PFCTxResume:         records.EventTxResume,
	switchmodel.PFCRxPause:          records.EventRxPause,
	switchmodel.PFCRxResume:         records.EventRxResume,
	switchmodel.PFCExpire:           records.EventExpire,
	switchmodel.PFCStormDetected:    records.EventStormDetected,
	switchmodel.PFCStormRestored:    records.EventStormRestored,
	switchmodel.PFCDeadlock:         records.EventDeadlock,
	switchmodel.PFCDeadlockResolved: records.EventDeadlockResolved,
}

var transportOf = [transport.NumKinds]records.Transport{
	transport.Open:    records.TransportOpen,
	transport.NewReno: records.TransportNewReno,
	transport.DCTCP:   records.TransportDCTCP,
	transport.DCQCN:   records.TransportDCQCN,
}

// kindOf maps a packet's class; open- and closed-loop data are both data.
var kindOf = [switchmodel.NumClasses]records.PacketKind{
	switchmodel.OpenData:   records.KindData,
	switchmodel.ClosedData: records.KindData,
	switchmodel.Ack:        records.KindAck,
	switchmodel.Cnp:        records.KindCNP,
	switchmodel.Nak:        records.KindNAK,
}

var transportEventOf = [transport.NumEventKinds]records.TransportEventKind{
	transport.EventCNP:            records.EventCNP,
	transport.EventRateCut:        records.EventRateCut,
	transport.EventRateIncrease:   records.EventRateIncrease,
	transport.EventWindowCut:      records.EventWindowCut,
	transport.EventFastRetransmit: records.EventFastRetransmit,
	transport.EventTimeout:        records.EventTimeout,
}

var hashMethodOf = [ecmp.NumMethods]records.HashMethod{
	ecmp.CRC32:         records.HashCRC32,
	ecmp.CRC32WithSalt: records.HashCRC32WithSalt,
	ecmp.CRC16:         records.HashCRC16,
	ecmp.CRC16CCITT:    records.HashCRC16CCITT,
	ecmp.XOR16:         records.HashXor16,
	ecmp.Toeplitz:      records.HashToeplitz,
}

// RecordHashMethod returns the records' name of a hash method.
func RecordHashMethod(m ecmp.Method) (records.HashMethod, error) {
	if !m.Valid() {
		return 0, fmt.Errorf("replay: hash method %v has no record name", m)
	}
	return hashMethodOf[m], nil
}
