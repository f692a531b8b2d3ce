package network

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/labs/netns/topology"
)

// EtcNetnsDir is where `ip netns exec NAME` finds the files it bind-mounts
// over /etc for a namespace: /etc/netns/NAME/resolv.conf becomes the
// command's /etc/resolv.conf (iproute2's bind_etc, in a mount namespace
// of the command's own; the host's mounts do not change). svclab writes a
// lab host's resolv.conf there, so every command run with `ip netns exec`
// (svclab exec, the lab's processes) resolves through the lab's DNS.
const EtcNetnsDir = "/etc/netns"

// resolvConfName is the one file svclab writes in /etc/netns/<namespace>/.
const resolvConfName = "resolv.conf"

// resolvConfMark starts every resolv.conf svclab writes; the lab's name
// follows it, so that delete removes only its own lab's files (a file
// someone else put in a lab's directory stays).
const resolvConfMark = "# svclab lab="

// ResolvConfHeader is the first line of lab's resolv.conf files.
func ResolvConfHeader(lab string) string { return resolvConfMark + lab + "\n" }

// WriteResolvConf writes /etc/netns/svclab-<lab>.<host>/resolv.conf. lab
// must be a valid lab name and host a DNS subdomain of at most 63
// characters (a lab host or pod name), so the file is exactly one entry below EtcNetnsDir; the write goes
// through an os.Root there (no symlink leads it elsewhere) and replaces
// the file atomically. body follows the header that marks it as the lab's.
func WriteResolvConf(lab, host string, body []byte) error {
	return writeResolvConf(EtcNetnsDir, lab, host, body)
}

// RemoveResolvConf removes one host's file and its directory (when empty).
func RemoveResolvConf(lab, host string) error {
	return removeResolvConf(EtcNetnsDir, lab, host)
}

// RemoveResolvConfs removes every resolv.conf of the lab: each
// /etc/netns/svclab-<lab>.*/resolv.conf (or svclab-<lab>-*/, as an older
// svclab named them) whose header names this lab, and
// the directory it was in when that leaves it empty. It needs no state and
// no namespace, so it also cleans up after a crash; a lab without files is
// not an error.
func RemoveResolvConfs(lab string) error {
	return removeResolvConfs(EtcNetnsDir, lab)
}

func resolvConfDir(lab, host string) (string, error) {
	if err := topology.ValidateLabName(lab); err != nil {
		return "", fmt.Errorf("resolv.conf: %w", err)
	}
	// A node, client or router name is a DNS label, a pod's name a DNS
	// subdomain (of at most 63 characters in a lab): neither can hold "/"
	// or be "." or "..", so the directory is one entry of EtcNetnsDir.
	if msgs := validation.IsDNS1123Subdomain(host); len(msgs) > 0 || len(host) > 63 {
		if len(msgs) == 0 {
			msgs = []string{"longer than 63 characters"}
		}
		return "", fmt.Errorf("resolv.conf of lab %s: host %q: %s", lab, host, msgs[0])
	}
	return NamespaceName(lab, host), nil
}

func writeResolvConf(root, lab, host string, body []byte) error {
	dir, err := resolvConfDir(lab, host)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("resolv.conf of %s: %w", dir, err)
	}
	data := append([]byte(ResolvConfHeader(lab)), body...)
	tmp := dir + "/." + resolvConfName + ".tmp"
	if err := r.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("resolv.conf of %s: %w", dir, err)
	}
	if err := r.Rename(tmp, dir+"/"+resolvConfName); err != nil {
		r.Remove(tmp)
		return fmt.Errorf("resolv.conf of %s: %w", dir, err)
	}
	return nil
}

func removeResolvConf(root, lab, host string) error {
	dir, err := resolvConfDir(lab, host)
	if err != nil {
		return nil // no file can have been written for that name
	}
	return removeIfOurs(root, lab, dir)
}

func removeResolvConfs(root, lab string) error {
	if err := topology.ValidateLabName(lab); err != nil {
		return fmt.Errorf("resolv.conf: %w", err)
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		// The older scheme's directories too (svclab-<lab>-<host>): the
		// header decides whose a file is.
		if e.IsDir() && (strings.HasPrefix(e.Name(), labPrefix(lab)) || strings.HasPrefix(e.Name(), NamespacePrefix+lab+"-")) {
			if err := removeIfOurs(root, lab, e.Name()); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// removeIfOurs removes root/dir/resolv.conf when its header names lab, and
// then dir if that left it empty (a file someone else put there stays).
func removeIfOurs(root, lab, dir string) error {
	r, err := os.OpenRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer r.Close()
	file := dir + "/" + resolvConfName
	data, err := r.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("resolv.conf of %s: %w", dir, err)
	}
	if !bytes.HasPrefix(data, []byte(ResolvConfHeader(lab))) {
		return nil // another lab's (or not svclab's)
	}
	if err := r.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove resolv.conf of %s: %w", dir, err)
	}
	r.Remove(dir + "/." + resolvConfName + ".tmp") //nolint:errcheck // a crashed write's leftover, if any
	r.Remove(dir)                                  //nolint:errcheck // kept when not empty
	return nil
}
