package nsthread_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/svclab/svclab/internal/nsthread"
	"github.com/svclab/svclab/internal/roottest"
)

func TestIntegrationDoRunsInsideAndComesBack(t *testing.T) {
	roottest.Require(t, "creates a network namespace")
	name := roottest.Netns(t, "svclab-nsthread")
	target, err := netns.GetFromPath(filepath.Join("/run/netns", name))
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	host, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()

	err = nsthread.Do(name, target, func() error {
		cur, err := netns.Get()
		if err != nil {
			return err
		}
		defer cur.Close()
		if !cur.Equal(target) {
			return errors.New("fn did not run in the namespace")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nsthread.Do(name, target, func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("a panic inside: err = %v, want it returned", err)
	}
	after, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if !after.Equal(host) {
		t.Error("the calling thread is no longer in the host's namespace")
	}
}
