package analysis

import "sync"

// testNames is the node table of the tests' hand-made intervals, flows and sets:
// nid("F") adds F the first time and returns its NodeID.
var (
	testNames   Nodes
	testNamesMu sync.Mutex
)

func nid(name string) NodeID {
	testNamesMu.Lock()
	defer testNamesMu.Unlock()
	for i, n := range testNames {
		if n == name {
			return NodeID(i)
		}
	}
	testNames = append(testNames, name)
	return NodeID(len(testNames) - 1)
}

// testNodes returns the test node table (a copy: later nid calls do not change it).
func testNodes() Nodes {
	testNamesMu.Lock()
	defer testNamesMu.Unlock()
	return append(Nodes(nil), testNames...)
}
