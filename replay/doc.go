// Package replay turns captures into a simulation of a fabric and streams its
// records (docs/model.md#topology, docs/model.md#replay, docs/records.md).
//
// It builds the fabric (NewTopology: package fabric's graph of the configuration's
// Clos, docs/model.md#clos-builder, or of a topology file, docs/topology.md, with the
// shortest-path and WCMP routing of docs/model.md#routing and every switch's profile
// checked; Describe is `replay topology`), maps the trace's IPv4 and IPv6 endpoints
// onto its hosts (MapRacks: subnet, spread, hash or a CSV file, over the racks
// of any fabric), instantiates the switch model of package switchmodel on that graph,
// injects every IPv4 packet of the capture at (t - t0) / Speedup into its source host's
// NIC, runs until the fabric drains or the drain limit passes, and writes the record
// files of package records plus run.json into an output directory that appears
// atomically.
//
// The capture is read twice, streaming both times: Prepare summarizes it (the
// subnet mapping needs every endpoint, sorted, before the first injection), and Run
// reads it again on a goroutine of its own that decodes each packet and prepares it
// for injection (injection time, trace index, flow id in first-seen order, hosts) a
// batch ahead of the simulation loop, which only injects: on a machine with a second
// core, reading overlaps with simulating. Memory is bounded by a few batches.
//
// Units: simulation time in picoseconds (units.Time), sizes in bytes, speeds in bits
// per second. Capture timestamps are nanoseconds; injection time is
// (t - t0) * 1000 / Speedup picoseconds, rounded down.
//
// Decisions where the spec is silent:
//   - Host ids are dense: the Clos's are in name order, id = (pod*RacksPerPod+rack)*
//     HostsPerRack+host; a file's in declaration order. Node indices put hosts first,
//     then switches (the Clos: racks, fabric and spine switches).
//   - The host mapping places endpoints on a list of racks (Rack: a name and its hosts
//     in order; MapRacks over Topology.HostRacks), so any fabric can use it.
//   - In subnet mode, /prefix groups placed on the same rack (more groups than racks)
//     take that rack's hosts in order, continuing after earlier groups; a group that
//     does not fit its rack moves whole to the next rack with room, or is split rack
//     by rack when no rack has room (docs/model.md#host-mapping).
//   - In spread mode endpoint k goes to the k-th rack in turn, skipping full racks.
//   - In hash mode an endpoint goes to host crc32IEEE(address bytes) mod Hosts.
//   - In a CSV host file the longest matching prefix wins; a header line "cidr,..." and
//     lines starting with # are skipped; an unmatched endpoint is an error.
package replay
