package promexport

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Endpoint is an Exporter served over HTTP at /metrics.
type Endpoint struct {
	*Exporter
	ln     net.Listener
	server *http.Server
	served chan error
}

// Serve binds addr ("127.0.0.1:9464"; port 0 takes a free one) and serves
// a new Exporter there, its series labelled with this host's name. The
// address is bound before Serve returns, so that one that does not parse
// or is taken is an error here, before a run does any I/O.
func Serve(addr string) (*Endpoint, error) {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	e := &Endpoint{Exporter: New(host), ln: ln, served: make(chan error, 1)}
	reg.MustRegister(e.Exporter)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	e.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { e.served <- e.server.Serve(ln) }()
	return e, nil
}

// URL is where the metrics are served: the bound address, its port
// chosen.
func (e *Endpoint) URL() string { return "http://" + e.ln.Addr().String() + "/metrics" }

// Close keeps serving for linger, or until ctx ends, so that a scrape
// after the run sees its totals; then it stops serving, letting scrapes
// under way finish for up to a second. It returns the server's error, if
// it failed.
func (e *Endpoint) Close(ctx context.Context, linger time.Duration) error {
	if linger > 0 {
		t := time.NewTimer(linger)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	err := e.server.Shutdown(shut)
	if served := <-e.served; !errors.Is(served, http.ErrServerClosed) {
		err = errors.Join(err, served)
	}
	return err
}
