package labstore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ProxyStatus is what a node's proxy reports after each sync attempt; the
// lab reads it to know that its rules are in place (`svclab apply` waits for
// every node to reach the generation it wrote).
type ProxyStatus struct {
	Node       string    `json:"node"`
	PID        int       `json:"pid"`
	Mode       string    `json:"mode"`
	Backend    string    `json:"backend,omitempty"`
	Generation int64     `json:"generation"`
	LastSync   time.Time `json:"lastSync"`
	Healthy    bool      `json:"healthy"`
	Error      string    `json:"error,omitempty"`
	// Failures counts the sync attempts that failed in a row (0 after a
	// success), so a reader can tell a retried failure from a first one.
	Failures int `json:"failures,omitempty"`
}

// WriteProxyStatus records a node proxy's status.
func (s *Store) WriteProxyStatus(st ProxyStatus) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return s.WriteFile(filepath.Join("proxies", st.Node+".json"), append(data, '\n'))
}

// ProxyStatuses returns the last status of every node proxy that wrote one.
func (s *Store) ProxyStatuses() (map[string]ProxyStatus, error) {
	out := map[string]ProxyStatus{}
	entries, err := os.ReadDir(s.Path("proxies"))
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		data, err := os.ReadFile(s.Path("proxies", e.Name()))
		if err != nil {
			return nil, err
		}
		var st ProxyStatus
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, err
		}
		out[st.Node] = st
	}
	return out, nil
}

// ClearProxyStatus forgets a node proxy's status (before it is restarted).
func (s *Store) ClearProxyStatus(node string) error {
	return s.RemoveFile("proxies", node+".json")
}
