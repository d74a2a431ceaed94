//go:build race

package main

// raceEnabled: the race detector slows every process of the cluster tests
// (NATS servers included) several times over, so they use longer leases.
const raceEnabled = true
