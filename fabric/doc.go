// Package fabric is the pure graph of a simulated data-center fabric
// (docs/topology.md, docs/model.md#topology): nodes (hosts and switches, with their
// role, tier, group, pod and plane labels and switch profile), full-duplex links
// (stable ids, both endpoints as node and port, speed and propagation delay),
// generators for the common shapes (clos, leaf-spine, five-stage, rail-optimized),
// explicit node and link lists from a topology file, import of ns-3 HPCC's
// topology.txt, shortest-path equal-cost routing with WCMP weights for unequal
// capacity, the description and picture of a fabric (`replay topology`), and its
// partition for the parallel engine (Partition, `replay topology --threads N`,
// docs/topology.md#partitions-for-the-parallel-engine).
//
// It knows nothing of the switch model: package replay instantiates switchmodel
// nodes on a Fabric. It imports only config (attributes and link classes) and
// units.
//
// Numbering: hosts first (node i < Hosts is host id i), in declaration order (the
// Clos: pod, rack, host), then switches in declaration order (the Clos: racks,
// fabric switches, spines). A node's ports are numbered in the order its links were
// made: for generated shapes, host links first, then each tier's uplinks; for a file,
// host links in host order, then the Links entries in file order. Link ids are the
// order of creation, and never change for a given file: failures (issue 23) name
// links by id or by their two endpoints.
//
// Routing (Route) is a function of the fabric and a State (links and nodes down,
// switches drained): per switch, per rack (switch with hosts) one weighted next-hop
// set; a host's own rack reaches it through its host port. Sets are deduplicated per
// switch, so the tables of a 16,384-host fabric stay small.
package fabric
