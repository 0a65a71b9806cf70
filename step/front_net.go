package step

import "github.com/cephbench/cephbench/result/netresult"

// Net is a net client step's options: which cephbench net server it tests
// and how. The step's Workload is empty: the test moves no I/O through an
// engine.
type Net struct {
	// Host is the server's host name or address, without a port.
	Host string `json:"host"`
	// Port is the server's TCP port.
	Port int `json:"port"`
	// Params are the test's mode, streams, durations and write size, as
	// the client sends them to the server.
	Params netresult.Params `json:"params"`
}
