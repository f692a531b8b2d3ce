package server

import (
	"fmt"
	"time"
)

// Health is the body of /healthz and /livez. The first five fields are
// upstream's ProxyHealth; nodeName, reason, lastError and
// consecutiveFailures are svclab's.
type Health struct {
	// LastUpdated is the last successful sync. In a healthy /healthz
	// response it is the current time instead, as upstream does for
	// backward compatibility; Status keeps the real one.
	LastUpdated time.Time `json:"lastUpdated"`
	CurrentTime time.Time `json:"currentTime"`
	Healthy     bool      `json:"healthy"`
	// Status is per IP family ("IPv4"), as upstream's.
	Status map[string]ProxierHealth `json:"status,omitempty"`

	NodeName string `json:"nodeName,omitempty"`
	// Reason says why the proxy is unhealthy; empty when healthy.
	Reason string `json:"reason,omitempty"`
	// LastError is the error of the most recent failed sync, kept until a
	// sync succeeds.
	LastError           string `json:"lastError,omitempty"`
	ConsecutiveFailures int    `json:"consecutiveFailures,omitempty"`
}

// ProxierHealth is the health of the proxier of one IP family.
type ProxierHealth struct {
	LastUpdated time.Time `json:"lastUpdated"`
	Healthy     bool      `json:"healthy"`
}

// healthState is what the sync loop has told the Server about one IP
// family; guarded by Server.mu.
type healthState struct {
	lastSynced          time.Time // zero until the first successful sync
	pendingSince        time.Time // oldest queued update not yet synced; zero if none
	lastError           string
	consecutiveFailures int
	unhealthyReason     string // the Server's, set by SetUnhealthy, sticky until ClearUnhealthy
}

// verdict applies the health rules at now:
//
//  1. SetUnhealthy's reason, while set, makes the proxy unhealthy (a rejected
//     config, a missing kernel feature: things a resync cannot fix).
//  2. Otherwise, as upstream: unhealthy when an update has been pending
//     (queued by QueuedUpdate, or left by a failed sync) for healthTimeout or
//     more without a successful sync. A restore that keeps failing therefore
//     turns /healthz to 503 after healthTimeout (2 × syncPeriod).
//  3. Otherwise healthy, including while starting up before the first sync.
//
// Unlike upstream, an update pending since before the first successful sync
// counts too, so a proxy whose very first sync never succeeds goes unhealthy.
func (h healthState) verdict(now time.Time, healthTimeout time.Duration) (healthy bool, reason string) {
	if h.unhealthyReason != "" {
		return false, h.unhealthyReason
	}
	if !h.pendingSince.IsZero() {
		if waited := now.Sub(h.pendingSince); waited >= healthTimeout {
			reason := fmt.Sprintf("no successful sync for %s since an update was queued (limit %s)",
				waited.Round(time.Millisecond), healthTimeout)
			if h.consecutiveFailures > 0 {
				reason += fmt.Sprintf("; %d consecutive sync failures", h.consecutiveFailures)
			}
			return false, reason
		}
	}
	return true, ""
}
