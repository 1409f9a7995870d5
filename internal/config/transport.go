package config

import (
	"fmt"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Transport configures closed-loop replay (docs/model.md#closed-loop-transports):
// which captured flows are re-sent by simulated senders, and the parameters of their
// congestion control. With Mode open (the default) every captured packet enters the
// fabric at its captured time and nothing here applies.
type Transport struct {
	// Mode is open (default: every captured packet is injected at its captured time)
	// or closed (TCP and RoCEv2 flows are re-sent by simulated senders; the command's
	// --transport flag sets it).
	Mode TransportMode `yaml:"Mode"`
	// Tcp selects the sender of TCP flows in closed mode: auto (default: dctcp when
	// the flow's first data packet is ECN-capable, else newreno), dctcp, newreno, or
	// open (TCP stays open loop).
	Tcp TcpMode `yaml:"Tcp"`
	// Roce selects the sender of RoCEv2 flows (UDP destination port 4791) in closed
	// mode: dcqcn (default) or open.
	Roce RoceMode `yaml:"Roce"`

	// InitialWindow is TCP's initial congestion window in segments of the flow's
	// largest captured segment (default 10, RFC 6928). Must be >= 1.
	InitialWindow int `yaml:"InitialWindow"`
	// MinRto is the floor of TCP's retransmission timeout (default 10 ms, as in data
	// center studies; Linux uses 200 ms). Must be > 0.
	MinRto units.Time `yaml:"MinRto"`
	// InitialRto is the retransmission timeout before the first RTT sample (default
	// 10 ms; RFC 6298 suggests 1 s for the Internet). Must be >= MinRto.
	InitialRto units.Time `yaml:"InitialRto"`
	// MaxRto caps the exponential backoff of the retransmission timeout (default 60 s,
	// RFC 6298's upper bound). Must be >= InitialRto.
	MaxRto units.Time `yaml:"MaxRto"`
	// DctcpG is DCTCP's estimation gain g (default 1/16, RFC 8257), in (0,1].
	DctcpG float64 `yaml:"DctcpG"`

	// CnpInterval: a receiver sends at most one CNP per flow per interval (default
	// 4 us, ConnectX min_time_between_cnps). Must be >= 0.
	CnpInterval units.Time `yaml:"CnpInterval"`
	// CnpDscp is the DSCP of CNP packets (default 48, so TC 6 under the default
	// DSCP-to-TC map), 0..63.
	CnpDscp int `yaml:"CnpDscp"`
	// DcqcnG is DCQCN's alpha gain g (default 1/256), in (0,1].
	DcqcnG float64 `yaml:"DcqcnG"`
	// AlphaUpdateInterval is the period of DCQCN's alpha update (default 1 us). > 0.
	AlphaUpdateInterval units.Time `yaml:"AlphaUpdateInterval"`
	// RateDecreaseInterval is the period at which a sender cuts its rate if a CNP
	// arrived since the last cut (default 4 us). > 0.
	RateDecreaseInterval units.Time `yaml:"RateDecreaseInterval"`
	// RateIncreaseTimer is the period of rate increases after a cut (default 300 us).
	// > 0.
	RateIncreaseTimer units.Time `yaml:"RateIncreaseTimer"`
	// FastRecoverySteps is F: the number of fast-recovery increases after a cut
	// before additive increase (default 1). >= 0.
	FastRecoverySteps int `yaml:"FastRecoverySteps"`
	// RateAI is the additive increase of the target rate; 0 (default) scales with the
	// NIC: 5 Mb/s per 25 Gb/s (20 Mb/s at 100 Gb/s). >= 0.
	RateAI units.BitRate `yaml:"RateAI"`
	// RateHAI is the hyper increase of the target rate; 0 (default) scales with the
	// NIC: 50 Mb/s per 25 Gb/s (200 Mb/s at 100 Gb/s). >= 0.
	RateHAI units.BitRate `yaml:"RateHAI"`
	// MinRate is the floor of a DCQCN sender's rate (default 1 Gb/s). > 0.
	MinRate units.BitRate `yaml:"MinRate"`
	// RoceTimeout: a RoCE sender with unacknowledged packets that saw no progress for
	// this long resends from the first unacknowledged one (default 4.096 us * 2^14 =
	// 67.108864 ms). > 0.
	RoceTimeout units.Time `yaml:"RoceTimeout"`
}

// DefaultTransport returns the Transport block's defaults.
func DefaultTransport() Transport {
	return Transport{
		Mode:                 TransportOpen,
		Tcp:                  TcpAuto,
		Roce:                 RoceDcqcn,
		InitialWindow:        10,
		MinRto:               10 * units.Millisecond,
		InitialRto:           10 * units.Millisecond,
		MaxRto:               60 * units.Second,
		DctcpG:               1.0 / 16,
		CnpInterval:          4 * units.Microsecond,
		CnpDscp:              48,
		DcqcnG:               1.0 / 256,
		AlphaUpdateInterval:  units.Microsecond,
		RateDecreaseInterval: 4 * units.Microsecond,
		RateIncreaseTimer:    300 * units.Microsecond,
		FastRecoverySteps:    1,
		MinRate:              units.Gbps,
		RoceTimeout:          4096 * units.Nanosecond << 14,
	}
}

// RateIncrease returns DCQCN's additive and hyper increases for a NIC of the given
// speed: RateAI and RateHAI, or, where 0, 5 and 50 Mb/s per 25 Gb/s of speed.
func (t *Transport) RateIncrease(nic units.BitRate) (ai, hai units.BitRate) {
	ai, hai = t.RateAI, t.RateHAI
	if ai == 0 {
		ai = units.BitRate(int64(nic) / 5000) // 5 Mb/s per 25 Gb/s
	}
	if hai == 0 {
		hai = units.BitRate(int64(nic) / 500) // 50 Mb/s per 25 Gb/s
	}
	return ai, hai
}

func (t *Transport) validate(e *Error) {
	if !t.Mode.valid() {
		e.add("Transport.Mode", "%v is not open or closed", t.Mode)
	}
	if !t.Tcp.valid() {
		e.add("Transport.Tcp", "%v is not auto, dctcp, newreno or open", t.Tcp)
	}
	if !t.Roce.valid() {
		e.add("Transport.Roce", "%v is not dcqcn or open", t.Roce)
	}
	if t.InitialWindow < 1 || t.InitialWindow > 1<<20 {
		e.add("Transport.InitialWindow", "%d segments is outside 1..%d", t.InitialWindow, 1<<20)
	}
	if t.MinRto <= 0 {
		e.add("Transport.MinRto", "%v must be positive", t.MinRto)
	}
	if t.InitialRto < t.MinRto {
		e.add("Transport.InitialRto", "%v is below MinRto %v", t.InitialRto, t.MinRto)
	}
	if t.MaxRto < t.InitialRto {
		e.add("Transport.MaxRto", "%v is below InitialRto %v", t.MaxRto, t.InitialRto)
	}
	for _, g := range []struct {
		attr string
		v    float64
	}{{"Transport.DctcpG", t.DctcpG}, {"Transport.DcqcnG", t.DcqcnG}} {
		if !finite(g.v) || g.v <= 0 || g.v > 1 {
			e.add(g.attr, "%v is outside (0,1] (an EWMA gain)", g.v)
		}
	}
	if t.CnpInterval < 0 {
		e.add("Transport.CnpInterval", "%v is negative", t.CnpInterval)
	}
	if t.CnpDscp < 0 || t.CnpDscp > 63 {
		e.add("Transport.CnpDscp", "%d is not a DSCP (0..63)", t.CnpDscp)
	}
	for _, iv := range []struct {
		attr string
		v    units.Time
	}{{"Transport.AlphaUpdateInterval", t.AlphaUpdateInterval}, {"Transport.RateDecreaseInterval", t.RateDecreaseInterval},
		{"Transport.RateIncreaseTimer", t.RateIncreaseTimer}, {"Transport.RoceTimeout", t.RoceTimeout}} {
		if iv.v <= 0 {
			e.add(iv.attr, "%v must be positive", iv.v)
		}
	}
	if t.FastRecoverySteps < 0 {
		e.add("Transport.FastRecoverySteps", "%d is negative", t.FastRecoverySteps)
	}
	if t.RateAI < 0 {
		e.add("Transport.RateAI", "%v is negative (0 = scaled with the NIC speed)", t.RateAI)
	}
	if t.RateHAI < 0 {
		e.add("Transport.RateHAI", "%v is negative (0 = scaled with the NIC speed)", t.RateHAI)
	}
	if t.MinRate <= 0 {
		e.add("Transport.MinRate", "%v must be positive", t.MinRate)
	}
}

// TransportMode is open or closed loop.
type TransportMode uint8

// Transport modes.
const (
	TransportOpen   TransportMode = iota // every captured packet at its captured time
	TransportClosed                      // TCP and RoCEv2 flows re-sent by simulated senders
)

// TcpMode selects the sender of TCP flows in closed mode.
type TcpMode uint8

// TCP modes.
const (
	TcpAuto    TcpMode = iota // dctcp if the first data packet is ECN-capable, else newreno
	TcpDctcp                  // DCTCP (RFC 8257)
	TcpNewReno                // NewReno (RFC 5681, 6582)
	TcpOpen                   // TCP stays open loop
)

// RoceMode selects the sender of RoCEv2 flows in closed mode.
type RoceMode uint8

// RoCE modes.
const (
	RoceDcqcn RoceMode = iota // DCQCN (ConnectX behaviour)
	RoceOpen                  // RoCE stays open loop
)

var (
	transportModeNames = []string{"open", "closed"}
	tcpModeNames       = []string{"auto", "dctcp", "newreno", "open"}
	roceModeNames      = []string{"dcqcn", "open"}
)

func enumName(names []string, v uint8, typ string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, v)
}

func parseEnumName(names []string, s, what string) (uint8, error) {
	for i, n := range names {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %s %q is unknown (want %s)", ErrSyntax, what, s, strings.Join(names, ", "))
}

func (m TransportMode) valid() bool { return int(m) < len(transportModeNames) }
func (m TransportMode) String() string {
	return enumName(transportModeNames, uint8(m), "TransportMode")
}

// WantTransportMode says what a transport mode must be, for an error about the bad
// value s: "want open or closed", and where s belongs when it names a closed-loop
// sender ("dctcp" is Transport.Tcp's: --transport closed --set Transport.Tcp=dctcp).
func WantTransportMode(s string) string {
	want := "want open or closed"
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "auto" {
		return want + "; auto is Transport.Tcp's default closed-loop TCP sender (DCTCP when ECN-capable, else NewReno): --transport closed"
	}
	if _, err := ParseTcpMode(v); err == nil && v != "open" {
		return want + fmt.Sprintf("; %s is a closed-loop TCP sender, chosen by Transport.Tcp: --transport closed --set Transport.Tcp=%s", v, v)
	}
	if _, err := ParseRoceMode(v); err == nil && v != "open" {
		return want + fmt.Sprintf("; %s is the closed-loop RoCEv2 sender (Transport.Roce, the default): --transport closed", v)
	}
	return want
}

// ParseTransportMode reads "open" or "closed".
func ParseTransportMode(s string) (TransportMode, error) {
	v, err := parseEnumName(transportModeNames, s, "transport mode")
	return TransportMode(v), err
}

// MarshalText implements encoding.TextMarshaler.
func (m TransportMode) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *TransportMode) UnmarshalText(b []byte) (err error) {
	*m, err = ParseTransportMode(string(b))
	return err
}

func (m TcpMode) valid() bool    { return int(m) < len(tcpModeNames) }
func (m TcpMode) String() string { return enumName(tcpModeNames, uint8(m), "TcpMode") }

// ParseTcpMode reads "auto", "dctcp", "newreno" or "open".
func ParseTcpMode(s string) (TcpMode, error) {
	v, err := parseEnumName(tcpModeNames, s, "TCP mode")
	return TcpMode(v), err
}

// MarshalText implements encoding.TextMarshaler.
func (m TcpMode) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *TcpMode) UnmarshalText(b []byte) (err error) {
	*m, err = ParseTcpMode(string(b))
	return err
}

func (m RoceMode) valid() bool    { return int(m) < len(roceModeNames) }
func (m RoceMode) String() string { return enumName(roceModeNames, uint8(m), "RoceMode") }

// ParseRoceMode reads "dcqcn" or "open".
func ParseRoceMode(s string) (RoceMode, error) {
	v, err := parseEnumName(roceModeNames, s, "RoCE mode")
	return RoceMode(v), err
}

// MarshalText implements encoding.TextMarshaler.
func (m RoceMode) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *RoceMode) UnmarshalText(b []byte) (err error) {
	*m, err = ParseRoceMode(string(b))
	return err
}
