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

	// InitialWindow is N of TCP's initial congestion window min(N SMSS, max(2 SMSS,
	// InitialWindowBytes)) (default 10: RFC 6928's min(10 SMSS, max(2 SMSS, 14600))).
	// Must be >= 1.
	InitialWindow int `yaml:"InitialWindow"`
	// InitialWindowBytes is the byte bound of the initial window (default 14600, RFC
	// 6928); 0 = none: N segments whatever their size, as Linux. >= 0.
	InitialWindowBytes units.Bytes `yaml:"InitialWindowBytes"`
	// Mss is the SMSS of a TCP flow whose capture holds no SYN with an MSS option, in
	// bytes; 0 (default) = Mtu minus the flow's IP and TCP headers. A SYN's option,
	// and Mtu minus the headers, always cap it (docs/model.md#tcp). >= 0.
	Mss units.Bytes `yaml:"Mss"`
	// IdleRestart is what a TCP sender's window does after it sent nothing for more
	// than an RTO with nothing in flight (docs/model.md#tcp): rfc5681 (default:
	// cwnd = min(cwnd, initial window), RFC 5681 section 4.1), linux (halved per RTO
	// idle down to that, ssthresh raised to 3/4 of the old cwnd, as Linux's
	// tcp_cwnd_restart), or off (the window is kept).
	IdleRestart IdleRestart `yaml:"IdleRestart"`
	// LimitedTransmit: a TCP sender sends one new segment on each of the first two
	// duplicate ACKs (RFC 3042; default true, as Linux).
	LimitedTransmit bool `yaml:"LimitedTransmit"`
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

	// MessageGap splits each flow into messages (docs/model.md#messages), open and
	// closed loop: a data packet that follows the flow's previous one by at least
	// this long starts a new message, as does one after data of the reverse direction
	// (a turn-around); 0 (default) = 4 x the fabric's base RTT (65.51424 us for the
	// default Clos). >= 0.
	MessageGap units.Time `yaml:"MessageGap"`
	// Causality is when a closed-loop message that follows a reverse-direction
	// message becomes available (docs/model.md#causality): captured (default: at its
	// captured time, as every segment) or request (at the later of its captured time
	// and that message's delivery plus the captured think time).
	Causality Causality `yaml:"Causality"`

	// CnpInterval: a receiver sends at most one CNP per flow per interval (default
	// 4 us, ConnectX min_time_between_cnps). Must be >= 0.
	CnpInterval units.Time `yaml:"CnpInterval"`
	// CnpDscp is the DSCP of CNP packets (default 48, so TC 6 under the default
	// DSCP-to-TC map), 0..63.
	CnpDscp int `yaml:"CnpDscp"`
	// NakInterval: a RoCE receiver that still waits for the packet its last NAK asked
	// for sends that NAK again after this long (default 500 us, HPCC's
	// NACKGenerationInterval); 0 = one NAK per gap. Must be >= 0.
	NakInterval units.Time `yaml:"NakInterval"`
	// NicControlPriority says which control packets a host's NIC sends ahead of the
	// host's own data (docs/model.md#nic-control-packets): roce (default: RoCE ACKs,
	// NAKs and CNPs, which the NIC itself generates, as HPCC's strict-priority ACK
	// queue), all (TCP ACKs too), none (each waits in its class behind the data).
	NicControlPriority NicControlPriority `yaml:"NicControlPriority"`
	// DcqcnVariant is the DCQCN reaction point (docs/model.md#dcqcn): mlx (default:
	// NVIDIA ConnectX as HPCC's ns-3 models it) or paper (the DCQCN paper's: a cut
	// on every CNP, alpha decaying every AlphaUpdateInterval after the last CNP, a
	// byte counter beside the increase timer). paper also changes the defaults of
	// the attributes the configuration does not set: AlphaUpdateInterval 55us,
	// RateIncreaseTimer 55us, FastRecoverySteps 5, ByteCounter 10MB, CnpInterval
	// 50us, ClampTargetRate true.
	DcqcnVariant DcqcnVariant `yaml:"DcqcnVariant"`
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
	// ClampTargetRate: every rate cut sets the target rate RT to the current rate
	// first (true; ConnectX CLAMP_TGT_RATE 1, the paper's rule), or only a cut that
	// follows an increase (false, default of mlx: CLAMP_TGT_RATE 0 with
	// CLAMP_TGT_RATE_AFTER_TIME_INC 1, as HPCC).
	ClampTargetRate bool `yaml:"ClampTargetRate"`
	// RateOnFirstCnp: the mlx variant's first CNP of a flow sets RC = RT =
	// max(MinRate, RateOnFirstCnp x RC) (default 1: unchanged, as HPCC's
	// RateOnFirstCnp). In [0,1].
	RateOnFirstCnp float64 `yaml:"RateOnFirstCnp"`
	// ByteCounter: the paper variant's byte counter, one rate-increase event per
	// this many bytes sent (paper default 10 MB); 0 = none. The mlx variant has none
	// (must be 0). >= 0.
	ByteCounter units.Bytes `yaml:"ByteCounter"`
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
		InitialWindowBytes:   14600,
		IdleRestart:          IdleRfc5681,
		LimitedTransmit:      true,
		MinRto:               10 * units.Millisecond,
		InitialRto:           10 * units.Millisecond,
		MaxRto:               60 * units.Second,
		DctcpG:               1.0 / 16,
		CnpInterval:          4 * units.Microsecond,
		CnpDscp:              48,
		NakInterval:          500 * units.Microsecond,
		NicControlPriority:   ControlRoce,
		DcqcnVariant:         DcqcnMlx,
		DcqcnG:               1.0 / 256,
		AlphaUpdateInterval:  units.Microsecond,
		RateDecreaseInterval: 4 * units.Microsecond,
		RateIncreaseTimer:    300 * units.Microsecond,
		FastRecoverySteps:    1,
		MinRate:              units.Gbps,
		RateOnFirstCnp:       1,
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
	if !t.IdleRestart.valid() {
		e.add("Transport.IdleRestart", "%v is not rfc5681, linux or off", t.IdleRestart)
	}
	if !t.Causality.valid() {
		e.add("Transport.Causality", "%v is not captured or request", t.Causality)
	}
	if t.MessageGap < 0 {
		e.add("Transport.MessageGap", "%v is negative (0 = 4 x the base RTT)", t.MessageGap)
	}
	if !t.NicControlPriority.valid() {
		e.add("Transport.NicControlPriority", "%v is not roce, all or none", t.NicControlPriority)
	}
	if !t.DcqcnVariant.valid() {
		e.add("Transport.DcqcnVariant", "%v is not mlx or paper", t.DcqcnVariant)
	}
	if t.InitialWindow < 1 || t.InitialWindow > 1<<20 {
		e.add("Transport.InitialWindow", "%d segments is outside 1..%d", t.InitialWindow, 1<<20)
	}
	if t.InitialWindowBytes < 0 {
		e.add("Transport.InitialWindowBytes", "%v is negative (0 = no byte bound)", t.InitialWindowBytes)
	}
	if t.Mss < 0 || t.Mss > 65535 {
		e.add("Transport.Mss", "%v is outside 0..65535 (0 = Mtu minus the headers)", t.Mss)
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
	if t.NakInterval < 0 {
		e.add("Transport.NakInterval", "%v is negative (0 = one NAK per gap)", t.NakInterval)
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
	if !finite(t.RateOnFirstCnp) || t.RateOnFirstCnp < 0 || t.RateOnFirstCnp > 1 {
		e.add("Transport.RateOnFirstCnp", "%v is outside [0,1] (a fraction of the current rate)", t.RateOnFirstCnp)
	}
	switch {
	case t.ByteCounter < 0:
		e.add("Transport.ByteCounter", "%v is negative (0 = none)", t.ByteCounter)
	case t.ByteCounter > 0 && t.DcqcnVariant == DcqcnMlx:
		e.add("Transport.ByteCounter", "%v: the mlx variant has no byte counter (DcqcnVariant: paper has one)", t.ByteCounter)
	}
}

// paperDefaults are the DCQCN paper's values of the attributes whose defaults
// DcqcnVariant paper changes (docs/model.md#dcqcn), by attribute path.
var paperDefaults = []struct {
	attr string
	set  func(t *Transport)
}{
	{"Transport.AlphaUpdateInterval", func(t *Transport) { t.AlphaUpdateInterval = 55 * units.Microsecond }},
	{"Transport.RateIncreaseTimer", func(t *Transport) { t.RateIncreaseTimer = 55 * units.Microsecond }},
	{"Transport.FastRecoverySteps", func(t *Transport) { t.FastRecoverySteps = 5 }},
	{"Transport.ByteCounter", func(t *Transport) { t.ByteCounter = 10 * units.MB }},
	{"Transport.CnpInterval", func(t *Transport) { t.CnpInterval = 50 * units.Microsecond }},
	{"Transport.ClampTargetRate", func(t *Transport) { t.ClampTargetRate = true }},
}

// UsePaperDefaults gives the attributes whose defaults DcqcnVariant paper changes
// the paper's values, except those isSet reports the configuration set (nil: none
// was). Parse calls it when the variant is paper.
func (t *Transport) UsePaperDefaults(isSet func(attr string) bool) {
	for _, d := range paperDefaults {
		if isSet == nil || !isSet(d.attr) {
			d.set(t)
		}
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

// IdleRestart is what a TCP sender's window does after an idle period longer than
// its RTO.
type IdleRestart uint8

// Idle restarts.
const (
	IdleRfc5681 IdleRestart = iota // cwnd = min(cwnd, initial window) (RFC 5681 4.1)
	IdleLinux                      // halved per RTO idle down to that (Linux tcp_cwnd_restart)
	IdleOff                        // the window is kept
)

// Causality says when a closed-loop message that follows a reverse-direction message
// becomes available.
type Causality uint8

// Causalities.
const (
	CausalityCaptured Causality = iota // at its captured time
	CausalityRequest                   // not before its request's delivery plus the think time
)

// NicControlPriority selects the control packets a NIC sends ahead of its host's
// data.
type NicControlPriority uint8

// NIC control priorities.
const (
	ControlRoce NicControlPriority = iota // RoCE ACKs, NAKs and CNPs (generated by the NIC)
	ControlAll                            // TCP ACKs too
	ControlNone                           // none: every control packet waits in its class
)

// DcqcnVariant is a DCQCN reaction point.
type DcqcnVariant uint8

// DCQCN variants.
const (
	DcqcnMlx   DcqcnVariant = iota // NVIDIA ConnectX as HPCC's ns-3 "Mlx" mode
	DcqcnPaper                     // the DCQCN paper's (SIGCOMM 2015)
)

var (
	idleRestartNames   = []string{"rfc5681", "linux", "off"}
	causalityNames     = []string{"captured", "request"}
	nicControlNames    = []string{"roce", "all", "none"}
	dcqcnVariantNames  = []string{"mlx", "paper"}
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

func (m IdleRestart) valid() bool    { return int(m) < len(idleRestartNames) }
func (m IdleRestart) String() string { return enumName(idleRestartNames, uint8(m), "IdleRestart") }

// MarshalText implements encoding.TextMarshaler.
func (m IdleRestart) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler ("rfc5681", "linux", "off").
func (m *IdleRestart) UnmarshalText(b []byte) error {
	v, err := parseEnumName(idleRestartNames, string(b), "idle restart")
	*m = IdleRestart(v)
	return err
}

func (m NicControlPriority) valid() bool { return int(m) < len(nicControlNames) }
func (m NicControlPriority) String() string {
	return enumName(nicControlNames, uint8(m), "NicControlPriority")
}

// MarshalText implements encoding.TextMarshaler.
func (m NicControlPriority) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler ("roce", "all", "none").
func (m *NicControlPriority) UnmarshalText(b []byte) error {
	v, err := parseEnumName(nicControlNames, string(b), "NIC control priority")
	*m = NicControlPriority(v)
	return err
}

func (m DcqcnVariant) valid() bool    { return int(m) < len(dcqcnVariantNames) }
func (m DcqcnVariant) String() string { return enumName(dcqcnVariantNames, uint8(m), "DcqcnVariant") }

// MarshalText implements encoding.TextMarshaler.
func (m DcqcnVariant) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler ("mlx", "paper").
func (m *DcqcnVariant) UnmarshalText(b []byte) error {
	v, err := parseEnumName(dcqcnVariantNames, string(b), "DCQCN variant")
	*m = DcqcnVariant(v)
	return err
}

func (m Causality) valid() bool    { return int(m) < len(causalityNames) }
func (m Causality) String() string { return enumName(causalityNames, uint8(m), "Causality") }

// MarshalText implements encoding.TextMarshaler.
func (m Causality) MarshalText() ([]byte, error) {
	if !m.valid() {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler ("captured", "request").
func (m *Causality) UnmarshalText(b []byte) error {
	v, err := parseEnumName(causalityNames, string(b), "causality")
	*m = Causality(v)
	return err
}

// MessageGap returns the idle gap that ends a message: Transport.MessageGap, or 4 x
// BaseRTT when it is 0.
func (c *Config) MessageGap() units.Time {
	if g := c.Transport.MessageGap; g > 0 {
		return g
	}
	return 4 * c.BaseRTT()
}
