package multihost

import (
	"strings"
	"testing"
	"time"
)

// The offset is read off the ping that came back fastest: a slow pong's
// answer could have been taken anywhere in its round trip.
func TestClockOffsetTrustsTheFastestRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const ahead = 80 * time.Millisecond
	samples := []ClockSample{
		// 40 ms round trip, answered early in it: reads 60 ms ahead.
		{Sent: t0, Received: t0.Add(40 * time.Millisecond), Host: t0.Add(ahead)},
		// 2 ms round trip, answered in its middle: 80 ms ahead.
		{Sent: t0.Add(time.Second), Received: t0.Add(time.Second + 2*time.Millisecond), Host: t0.Add(time.Second + time.Millisecond + ahead)},
	}
	off, unc, err := ClockOffset(samples)
	if err != nil || off != ahead || unc != time.Millisecond {
		t.Errorf("offset %s ±%s, %v; want %s ±1ms", off, unc, err, ahead)
	}
	if _, _, err := ClockOffset(nil); err == nil {
		t.Error("no samples gave an offset")
	}
}

func TestSkewBeyondTheLimitIsRefusedNamingTheHost(t *testing.T) {
	if err := CheckSkew("h1", 49*time.Millisecond, time.Millisecond, DefaultMaxSkew); err != nil {
		t.Errorf("49 ms: %v", err)
	}
	// Within the limit once the estimate's uncertainty is allowed for.
	if err := CheckSkew("h1", -52*time.Millisecond, 3*time.Millisecond, DefaultMaxSkew); err != nil {
		t.Errorf("-52 ms ± 3 ms: %v", err)
	}
	err := CheckSkew("h4", 120*time.Millisecond, time.Millisecond, DefaultMaxSkew)
	if err == nil || !strings.Contains(err.Error(), "host h4") || !strings.Contains(err.Error(), "120ms") || strings.Contains(err.Error(), "\n") {
		t.Errorf("120 ms: %v; want one line naming h4 and its offset", err)
	}
}
