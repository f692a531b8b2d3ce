package kube

import (
	"crypto/rand"
	"time"

	"github.com/svclab/svclab/scenarios/kit/kube/access"
)

// The labels and names of the suite's objects (package access, which the
// CLI uses without this package's client libraries).
const (
	ManagedByLabel       = access.ManagedByLabel
	ManagedBy            = access.ManagedBy
	RunLabel             = access.RunLabel
	ComponentLabel       = access.ComponentLabel
	ComponentAgent       = access.ComponentAgent
	ComponentWorkspace   = access.ComponentWorkspace
	NameLabel            = access.NameLabel
	SavedProxyConfigName = access.SavedProxyConfigName
	RunLeaseName         = access.RunLeaseName
	DefaultProxyConfig   = access.DefaultProxyConfig
)

// managedSelector selects every object of the suite.
const managedSelector = ManagedByLabel + "=" + ManagedBy

// runLabels are the labels of every object of run id.
func runLabels(id string) map[string]string {
	return map[string]string{ManagedByLabel: ManagedBy, RunLabel: id}
}

// newRunID is a run id: the UTC time and a random suffix, so ids sort by
// start and two runs started in the same second differ.
func newRunID(now time.Time) string {
	return now.UTC().Format("20060102t150405") + "-" + suffix()
}

// suffix is five random lower-case letters and digits.
func suffix() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	rand.Read(b)
	for i := range b {
		b[i] = letters[int(b[i])%len(letters)]
	}
	return string(b)
}

// ParseNodeSelector and ParseProxyConfig read the flags' values.
var (
	ParseNodeSelector = access.ParseNodeSelector
	ParseProxyConfig  = access.ParseProxyConfig
)
