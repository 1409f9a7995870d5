package analysis

import (
	"math"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

// FCTSlowdown against hand-computed buckets and empirical quantiles.
func TestFCTSlowdown(t *testing.T) {
	const mtu, bdp = 9000, 200_000
	b := FCTBuckets(mtu, bdp)
	if b[1].LoByte != 9000 || b[1].HiByte != 200_000 || b[2].HiByte != 1_000_000 || b[3].HiByte != -1 {
		t.Fatalf("buckets %+v", b)
	}
	fl := func(size, fct, ideal int64, tr records.Transport, ok bool) FlowFCT {
		return FlowFCT{SizeBytes: size, FctPs: fct, IdealFctPs: ideal, Transport: tr, Complete: ok}
	}
	flows := []FlowFCT{
		// < MTU, open: slowdowns 1, 2, 3, 4 (and one incomplete flow, left out).
		fl(100, 10, 10, records.TransportOpen, true), fl(200, 20, 10, records.TransportOpen, true),
		fl(8999, 30, 10, records.TransportOpen, true), fl(0, 40, 10, records.TransportOpen, true),
		fl(500, 0, 10, records.TransportOpen, false),
		// MTU to BDP, dctcp: 9000 bytes is the bucket's lower bound; slowdown 1.5.
		fl(9000, 15, 10, records.TransportDCTCP, true),
		// >= 5 BDP, dctcp, 1,000,000 bytes exactly: slowdown 7.
		fl(1_000_000, 70, 10, records.TransportDCTCP, true),
		// No data of its own (closed loop: every captured packet a replaced ACK): in no
		// row, though complete; its transport (newreno) is then not present either.
		fl(0, 0, 0, records.TransportNewReno, true),
	}
	rows := FCTSlowdown(flows, mtu, bdp)
	find := func(tr, bucket string) SlowdownRow {
		for _, r := range rows {
			if r.Transport == tr && r.Name == bucket {
				return r
			}
		}
		t.Fatalf("no row %s/%s in %+v", tr, bucket, rows)
		return SlowdownRow{}
	}
	// Empirical quantile of {1, 2, 3, 4}: p50 = 2 (two of four at or below), p95 = p99 = 4.
	r := find("open", "< MTU")
	if r.Flows != 5 || r.Complete != 4 || *r.P50 != 2 || *r.P95 != 4 || *r.P99 != 4 || *r.Max != 4 {
		t.Errorf("open < MTU: %+v", r)
	}
	if r := find("dctcp", "MTU to BDP"); r.Complete != 1 || *r.P50 != 1.5 {
		t.Errorf("dctcp MTU to BDP: %+v", r)
	}
	if r := find("dctcp", ">= 5 BDP"); r.Complete != 1 || *r.P99 != 7 {
		t.Errorf("dctcp >= 5 BDP: %+v", r)
	}
	if r := find("dctcp", "BDP to 5 BDP"); r.Flows != 0 || r.P50 != nil {
		t.Errorf("an empty bucket has no quantile: %+v", r)
	}
	// All: slowdowns 1, 1.5, 2, 3, 4, 7 -> p50 = 2 (3 of 6 at or below 2), max 7.
	if r := find("all", "all"); r.Flows != 7 || r.Complete != 6 || *r.P50 != 2 || *r.Max != 7 {
		t.Errorf("all: %+v", r)
	}
	for _, r := range rows {
		if r.Transport == "newreno" {
			t.Errorf("a flow without data made a row: %+v", r)
		}
	}
	// One transport alone: no per-transport rows, just "all".
	for _, r := range FCTSlowdown(flows[:4], mtu, bdp) {
		if r.Transport != "all" {
			t.Errorf("single transport gave row %+v", r)
		}
	}
}

func TestFormatSlowdown(t *testing.T) {
	for v, want := range map[float64]string{1: "1.00", 1.234: "1.23", 45.94: "45.9", 99.94: "99.9", 312.4: "312", 1500: "1500", math.NaN(): "-"} {
		if got := FormatSlowdown(v); got != want {
			t.Errorf("FormatSlowdown(%v) = %q, want %q", v, got, want)
		}
	}
}
