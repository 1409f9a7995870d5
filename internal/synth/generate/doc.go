// Command generate writes a synthetic run directory for analyze's benchmarks:
//
//	go run ./internal/synth/generate -flows 1000000 -pfc 1000000 -o /tmp/synth-1m
package main
