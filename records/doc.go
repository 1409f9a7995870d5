// Package records writes and reads the output of a replay run (docs/records.md): Arrow
// IPC files (the IPC *file* format, also called Feather v2, readable by pyarrow,
// arrow-js, R arrow and polars) and run.json, in an output directory that appears
// atomically. It knows nothing of the simulator: rows are plain Go structs.
//
// # Files
//
//	ports.arrow        PortRow         (node, port, tc) counters at the end of the run
//	drops.arrow        DropRow         one dropped packet
//	pfc.arrow          PFCRow          one PFC event for one class
//	buffer.arrow       BufferRow       periodic (switch, pool) buffer sample
//	loadbalance.arrow  LoadBalanceRow  (switch, equal-cost set, member) totals
//	flows.arrow        FlowRow         one 5-tuple flow
//	delay.arrow        DelayRow        one bucket of the one-way delay histogram of a class
//	packets.arrow      PacketRow       one simulated packet (replay --record-packets)
//	transport.arrow    TransportRow    one congestion-control event (closed-loop runs)
//	stages.arrow       StageRow        a flow's member at one ECMP stage (fabrics with stages beyond rack and fabric)
//
// docs/records.md documents every column with its type, unit and meaning; the
// schemas are pinned by testdata/schemas.golden.
//
// # Decisions
//
//   - Columns are snake_case. Every schema carries the metadata
//     tracefabric.schema_version = "2" (SchemaVersion) and tracefabric.file = the
//     file's name; readers refuse other versions (ErrSchemaVersion) and files that are
//     truncated, foreign or have other columns (ErrNotRecordFile).
//   - Units: times and durations in picoseconds of simulated time (int64, *_ps);
//     sizes in bytes (*_bytes, bytes); speeds in bits per second (run.json *_bps).
//   - Counters are int64, not uint64, so that pandas, arrow-js (where uint64 becomes
//     BigInt) and SQL engines read them as plain integers. A packet's size is int32.
//   - Repeating strings are dictionary<int32, utf8> columns whose dictionaries are
//     known up front and written once per file: node names (node, peer, src_host,
//     dst_host, end_node) from Dictionaries.Nodes, given when the writer is created,
//     and the fixed enumerations Reason (headroom, egress-limit, pool-full, oversize),
//     PFCEvent (tx_pause, tx_resume, rx_pause, rx_resume, expire), Tier (host, rack,
//     fabric, spine), Fate (delivered, dropped, undrained) and HashMethod (crc32,
//     crc32WithSalt, crc16, crc16Ccitt, xor16, toeplitz). Every batch of a file uses
//     the same dictionary array, because the IPC file format allows one dictionary
//     per field (no replacement, no delta). Rows carry indices: a node is its index
//     in Dictionaries.Nodes, an enumeration its Go constant.
//   - Addresses are utf8 dotted quads (src, dst); rows hold [4]byte. proto, tc and
//     dscp are uint8; L4 ports (sport, dport) uint16; a switch port index is int32.
//   - ports.arrow has one drops_<reason> column per Reason (drops_headroom,
//     drops_egress_limit, drops_pool_full, drops_oversize) and drops_total, their sum,
//     computed by the writer.
//   - "Nothing" is -1 where a value is an index or a time: flows.arrow rack_member
//     and fabric_member are -1 when the flow did not cross that tier, packets.arrow
//     deliver_ps is -1 when the packet was not delivered. Statistics are null instead:
//     flows.arrow delay_min_ps, delay_mean_ps and delay_max_ps are null when the flow
//     delivered nothing, so that mean() in pandas, pyarrow or SQL skips them.
//   - packets.arrow path is the node names joined by " > " (PathSeparator);
//     end_node repeats its last node as a dictionary column for grouping.
//
// # Writing
//
// Create the output directory, one writer per file, append rows as the simulation
// produces them, close the writers, then commit run.json:
//
//	out, err := records.CreateOutputDir("out/demo")
//	drops, err := records.NewDropsWriter(out.Path(records.DropsFile), records.Dictionaries{Nodes: names})
//	err = drops.Append(&records.DropRow{...}) // no allocation per row in steady state
//	err = drops.Close()                       // footer; drops.Rows() for run.json's records
//	err = out.Commit(&run)                    // run.json complete=true, rename into place
//
// NewWriterSet creates all the writers of a run in one call and its Close returns
// the row counts for Run.Records. DelayHistogram accumulates delays into the buckets
// of delay.arrow. Writers buffer DefaultBatchRows rows (WithBatchRows) per record
// batch, so memory stays bounded however long the run. The same rows give the same
// bytes, and writers share no mutable state (replay --hash all runs several at once).
//
// # Reading
//
// ReadRun checks run.json (complete and schema version); Open* functions return a
// streaming Reader (one batch in memory), ReadAll all rows, ReadTable an arrow.Table,
// OpenBatches the record batches of any file (package records/export writes them as
// Parquet or CSV: replay export).
package records

// SchemaVersion is the version of the record files' schemas and of run.json. It
// changes whenever a column or key changes meaning, type or name, or a file is
// added. Version 3 added messages.arrow.
const SchemaVersion = 3

// OldestSchemaVersion is the oldest version readers accept: a version-2 run has the
// same files and columns but messages.arrow (analyze then reports slowdown per
// direction only).
const OldestSchemaVersion = 2
