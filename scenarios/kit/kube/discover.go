package kube

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/svclab/svclab/scenarios/kit"
)

// Where kubeadm keeps kube-proxy's configuration (and where svclab's proxy
// reads it when it has no --config).
const (
	kubeadmConfigMapNamespace = "kube-system"
	kubeadmConfigMapName      = "kube-proxy"
	kubeadmConfigKey          = "config.conf"
)

// Discovery is what Discover found: the facts, and the DaemonSet the proxy
// runs as (nil when none runs kube-proxy or svclab's proxy).
type Discovery struct {
	Proxy     kit.Proxy
	DaemonSet *appsv1.DaemonSet
}

// Discover finds what proxies Services on the cluster, with API reads only
// (nothing is created): a DaemonSet in any namespace whose pods run
// kube-proxy (labelled k8s-app=kube-proxy, or a container whose image or
// command is kube-proxy) or svclab's proxy (`svclab proxy`, whatever the
// DaemonSet's name); failing that, kube-proxy pods in kube-system that no
// DaemonSet owns (static pods); failing that, kind "other", saying what
// runs instead. Its configuration comes from proxyConfig ("NS/NAME" of a
// ConfigMap, when the caller names one), else the ConfigMap mounted where
// the pods' --config points, else the pods' flags over upstream's
// defaults. The mode is the configuration's: (*Target).Proxy asks the
// nodes' /proxyMode on top.
func Discover(ctx context.Context, cs kubernetes.Interface, proxyConfig string) (Discovery, error) {
	dss, err := cs.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return Discovery{}, fmt.Errorf("listing DaemonSets to find the Service proxy: %w", err)
	}
	found, err := findProxy(ctx, cs, dss.Items)
	if err != nil {
		return Discovery{}, err
	}
	if found.kind == kit.ProxyOther && found.daemonSet != nil {
		found.where += ": svclab's proxy, not in kube-proxy's place (no label k8s-app=kube-proxy), so checked as any Service proxy"
	}
	if found.kind == kit.ProxyOther {
		return Discovery{Proxy: kit.Proxy{
			Kind: kit.ProxyOther, Where: found.where,
			ModeFrom: "not kube-proxy: no mode read", ConfigFrom: "not kube-proxy: no configuration read",
			Config: kit.DefaultProxyConfig(),
		}}, nil
	}
	p := kit.Proxy{Kind: found.kind, Where: found.where}
	if err := readProxyConfig(ctx, cs, &p, found, proxyConfig); err != nil {
		return Discovery{}, err
	}
	return Discovery{Proxy: p, DaemonSet: found.daemonSet}, nil
}

// proxyFound is the proxy's workload: its kind, a description, the
// namespace and pod template it runs from, and the container that is the
// proxy.
type proxyFound struct {
	kind, where string
	namespace   string
	daemonSet   *appsv1.DaemonSet // nil for static pods
	pod         corev1.PodSpec
	container   corev1.Container
}

// findProxy picks the proxy among the DaemonSets (the one scheduled on
// the most nodes, then by name), else among kube-system's pods.
func findProxy(ctx context.Context, cs kubernetes.Interface, dss []appsv1.DaemonSet) (proxyFound, error) {
	var candidates []proxyFound
	for i := range dss {
		ds := &dss[i]
		if kind, c, ok := classifyPodSpec(&ds.Spec.Template.Spec, ds.Labels, ds.Spec.Template.Labels); ok && !windowsOnly(&ds.Spec.Template.Spec) {
			candidates = append(candidates, proxyFound{
				kind: kind, where: fmt.Sprintf("DaemonSet %s/%s", ds.Namespace, ds.Name),
				namespace: ds.Namespace, daemonSet: ds, pod: ds.Spec.Template.Spec, container: c,
			})
		}
	}
	if len(candidates) > 0 {
		sort.SliceStable(candidates, func(i, j int) bool {
			a, b := candidates[i].daemonSet, candidates[j].daemonSet
			if ai, bi := candidates[i].kind != kit.ProxyOther, candidates[j].kind != kit.ProxyOther; ai != bi {
				return ai // a proxy in kube-proxy's place first
			}
			if a.Status.DesiredNumberScheduled != b.Status.DesiredNumberScheduled {
				return a.Status.DesiredNumberScheduled > b.Status.DesiredNumberScheduled
			}
			return candidates[i].where < candidates[j].where
		})
		return candidates[0], nil
	}
	if found, ok, err := findStaticProxyPods(ctx, cs); err != nil || ok {
		return found, err
	}
	return proxyFound{kind: kit.ProxyOther, where: describeNoProxy(ctx, cs, dss)}, nil
}

// findStaticProxyPods looks for kube-proxy or svclab proxy pods in
// kube-system that no DaemonSet owns (static pods, as some installers
// run kube-proxy).
func findStaticProxyPods(ctx context.Context, cs kubernetes.Interface) (proxyFound, bool, error) {
	pods, err := cs.CoreV1().Pods(kubeadmConfigMapNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return proxyFound{}, false, fmt.Errorf("listing the pods of %s to find the Service proxy: %w", kubeadmConfigMapNamespace, err)
	}
	var names []string
	var first *corev1.Pod
	var kind string
	var container corev1.Container
	for i := range pods.Items {
		p := &pods.Items[i]
		if k, c, ok := classifyPodSpec(&p.Spec, p.Labels, nil); ok {
			if first == nil {
				first, kind, container = p, k, c
			}
			names = append(names, p.Name)
		}
	}
	if first == nil {
		return proxyFound{}, false, nil
	}
	return proxyFound{
		kind: kind, where: fmt.Sprintf("pods %s/%s, not from a DaemonSet", kubeadmConfigMapNamespace, strings.Join(names, ", ")),
		namespace: kubeadmConfigMapNamespace, pod: first.Spec, container: container,
	}, true, nil
}

// classifyPodSpec says whether a pod template runs a Service proxy, which
// one, and in which container: svclab's (`svclab proxy`, or an svclab
// image whose entrypoint is given `proxy`), else kube-proxy (a container
// whose command or image is kube-proxy, or pods labelled
// k8s-app=kube-proxy).
//
// svclab's proxy renders kube-proxy's rules, but it stands in for
// kube-proxy only in kube-proxy's place — labelled k8s-app=kube-proxy, as
// `svclab create cluster --proxy svclab` runs it: under another name and
// labels it is what any other Service proxy is to the suite, "other"
// (behaviour checked, kube-proxy's internals not), and the reason names it.
func classifyPodSpec(spec *corev1.PodSpec, labelSets ...map[string]string) (string, corev1.Container, bool) {
	inKubeProxysPlace := false
	for _, labels := range labelSets {
		inKubeProxysPlace = inKubeProxysPlace || labels["k8s-app"] == "kube-proxy"
	}
	for _, c := range spec.Containers {
		if runsSvclabProxy(c) {
			if !inKubeProxysPlace {
				return kit.ProxyOther, c, true
			}
			return kit.ProxySvclab, c, true
		}
	}
	for _, c := range spec.Containers {
		if runsKubeProxy(c) {
			return kit.ProxyKubeProxy, c, true
		}
	}
	for _, labels := range labelSets {
		if labels["k8s-app"] == "kube-proxy" && len(spec.Containers) > 0 {
			return kit.ProxyKubeProxy, spec.Containers[0], true
		}
	}
	return "", corev1.Container{}, false
}

// argv is a container's command and arguments split into words (a shell's
// `-c "kube-proxy --config=…"` too).
func argv(c corev1.Container) []string {
	var out []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		out = append(out, strings.Fields(a)...)
	}
	return out
}

func runsSvclabProxy(c corev1.Container) bool {
	words := argv(c)
	for i, w := range words {
		if path.Base(w) == "svclab" && i+1 < len(words) && words[i+1] == "proxy" {
			return true
		}
	}
	// svclab's image runs svclab: its args start with the subcommand.
	return len(c.Command) == 0 && strings.Contains(imageName(c.Image), "svclab") && len(words) > 0 && words[0] == "proxy"
}

func runsKubeProxy(c corev1.Container) bool {
	for _, w := range argv(c) {
		if path.Base(w) == "kube-proxy" {
			return true
		}
	}
	return imageName(c.Image) == "kube-proxy"
}

// imageName is the last path element of an image reference, without tag
// or digest ("registry.k8s.io/kube-proxy:v1.36.0" → "kube-proxy").
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	name := path.Base(ref)
	name, _, _ = strings.Cut(name, ":")
	return name
}

// windowsOnly says whether a pod template only runs on Windows nodes
// (kube-proxy's Windows DaemonSet next to the Linux one).
func windowsOnly(spec *corev1.PodSpec) bool {
	return spec.NodeSelector[corev1.LabelOSStable] == "windows"
}

// describeNoProxy says what a cluster without kube-proxy runs instead:
// the DaemonSets (a few), and Cilium's kube-proxy replacement when its
// ConfigMap says so.
func describeNoProxy(ctx context.Context, cs kubernetes.Interface, dss []appsv1.DaemonSet) string {
	var parts []string
	for _, ds := range dss {
		image := ""
		if containers := ds.Spec.Template.Spec.Containers; len(containers) > 0 {
			image = containers[0].Image
		}
		part := fmt.Sprintf("DaemonSet %s/%s (%s)", ds.Namespace, ds.Name, image)
		if imageName(image) == "cilium" {
			if cm, err := cs.CoreV1().ConfigMaps(ds.Namespace).Get(ctx, "cilium-config", metav1.GetOptions{}); err == nil {
				if v := cm.Data["kube-proxy-replacement"]; v != "" {
					part += fmt.Sprintf(": Cilium's kube-proxy replacement (cilium-config kube-proxy-replacement=%s)", v)
				}
			}
		}
		parts = append(parts, part)
	}
	sort.Strings(parts)
	const most = 6
	if len(parts) > most {
		parts = append(parts[:most], fmt.Sprintf("and %d more", len(parts)-most))
	}
	if len(parts) == 0 {
		return "no DaemonSet runs kube-proxy or `svclab proxy`, and there is no DaemonSet at all"
	}
	return "no DaemonSet runs kube-proxy or `svclab proxy`; " + strings.Join(parts, ", ")
}

// readProxyConfig fills p's configuration and mode from, in this order:
// the ConfigMap the caller named, the ConfigMap mounted where the pods'
// --config points, the kubeadm ConfigMap for svclab's proxy without
// --config (it reads that one through the API), the pods' flags.
func readProxyConfig(ctx context.Context, cs kubernetes.Interface, p *kit.Proxy, found proxyFound, named string) error {
	words := argv(found.container)
	switch configFile, hasConfig := flagValue(words, "config"); {
	case named != "":
		ns, name, err := ParseProxyConfig(named)
		if err != nil {
			return err
		}
		return fromConfigMap(ctx, cs, p, ns, name, "", "--proxy-config")
	case hasConfig:
		ns, name, key, ok := mountedConfigMap(found, configFile)
		if !ok {
			p.Config, p.Mode = kit.DefaultProxyConfig(), kit.DefaultProxyMode
			p.ConfigFrom = fmt.Sprintf("upstream's defaults: --config=%s is not a mounted ConfigMap (give it with --proxy-config NS/NAME)", configFile)
			p.ModeFrom = p.ConfigFrom
			return nil
		}
		return fromConfigMap(ctx, cs, p, ns, name, key, "mounted at "+configFile+" for --config")
	case found.kind == kit.ProxySvclab:
		err := fromConfigMap(ctx, cs, p, kubeadmConfigMapNamespace, kubeadmConfigMapName, kubeadmConfigKey, "read by svclab proxy through the API")
		if apierrors.IsNotFound(err) {
			p.Config, p.Mode = kit.DefaultProxyConfig(), kit.DefaultProxyMode
			p.ConfigFrom = "upstream's defaults (no --config, and no ConfigMap kube-system/kube-proxy)"
			p.ModeFrom = p.ConfigFrom
			return nil
		}
		return err
	default:
		fromFlags(p, words)
		return nil
	}
}

// fromConfigMap reads ns/name's key (config.conf, or the one entry that is
// a KubeProxyConfiguration, when key is "") into p.
func fromConfigMap(ctx context.Context, cs kubernetes.Interface, p *kit.Proxy, ns, name, key, how string) error {
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !strings.HasPrefix(how, "--proxy-config") {
		// Read with the suite's RBAC, which grants the ConfigMap
		// --proxy-config names (kubeadm's by default).
		return fmt.Errorf("the proxy's ConfigMap %s/%s (%s): %w; name it with --proxy-config %s/%s (`svclab conformance rbac --proxy-config %s/%s` grants reading it)",
			ns, name, how, err, ns, name, ns, name)
	}
	if err != nil {
		return fmt.Errorf("the proxy's ConfigMap %s/%s (%s): %w", ns, name, how, err)
	}
	if key == "" {
		key = configKey(cm)
	}
	data, ok := cm.Data[key]
	if !ok {
		return fmt.Errorf("the proxy's ConfigMap %s/%s (%s) has no key %q", ns, name, how, key)
	}
	cfg, mode, err := kit.DecodeProxyConfig([]byte(data))
	if err != nil {
		return fmt.Errorf("the proxy's ConfigMap %s/%s, key %s: %w", ns, name, key, err)
	}
	p.Config, p.Mode, p.ConfigMap = cfg, mode, ns+"/"+name
	p.ConfigFrom = fmt.Sprintf("ConfigMap %s/%s, key %s (%s)", ns, name, key, how)
	p.ModeFrom = p.ConfigFrom
	return nil
}

// configKey is config.conf when the ConfigMap has it, else its one entry
// that declares kind: KubeProxyConfiguration.
func configKey(cm *corev1.ConfigMap) string {
	if _, ok := cm.Data[kubeadmConfigKey]; ok {
		return kubeadmConfigKey
	}
	var keys []string
	for k, v := range cm.Data {
		if strings.Contains(v, "KubeProxyConfiguration") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return kubeadmConfigKey
	}
	return keys[0]
}

// mountedConfigMap finds the ConfigMap (namespace, name and key) whose
// volume the proxy container mounts where file is.
func mountedConfigMap(found proxyFound, file string) (ns, name, key string, ok bool) {
	for _, m := range found.container.VolumeMounts {
		var rel string
		switch {
		case m.SubPath != "" && file == m.MountPath:
			rel = m.SubPath
		case m.SubPath == "" && strings.HasPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/"):
			rel = strings.TrimPrefix(file, strings.TrimSuffix(m.MountPath, "/")+"/")
		default:
			continue
		}
		for _, v := range found.pod.Volumes {
			if v.Name != m.Name {
				continue
			}
			for _, src := range configMapSources(v) {
				if k, ok := itemKey(src, rel); ok {
					return found.namespace, src.Name, k, true
				}
			}
		}
	}
	return "", "", "", false
}

// configMapSources are a volume's ConfigMaps: a configMap volume's, or
// a projected volume's configMap sources.
func configMapSources(v corev1.Volume) []corev1.ConfigMapProjection {
	if v.ConfigMap != nil {
		return []corev1.ConfigMapProjection{{LocalObjectReference: v.ConfigMap.LocalObjectReference, Items: v.ConfigMap.Items}}
	}
	var out []corev1.ConfigMapProjection
	if v.Projected != nil {
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil {
				out = append(out, *s.ConfigMap)
			}
		}
	}
	return out
}

// itemKey is the ConfigMap key a file at rel inside the volume comes from:
// the item mapped to that path, or the key of that name when the volume
// maps no items.
func itemKey(src corev1.ConfigMapProjection, rel string) (string, bool) {
	if len(src.Items) == 0 {
		return rel, !strings.Contains(rel, "/")
	}
	for _, it := range src.Items {
		if it.Path == rel {
			return it.Key, true
		}
	}
	return "", false
}

// fromFlags is kube-proxy without --config: its flags over upstream's
// defaults (cmd/kube-proxy/app/options.go; with --config the file wins and
// these flags are ignored).
func fromFlags(p *kit.Proxy, words []string) {
	cfg, mode := kit.DefaultProxyConfig(), kit.DefaultProxyMode
	var used []string
	if v, ok := flagValue(words, "proxy-mode"); ok && v != "" {
		mode = v
		used = append(used, "--proxy-mode="+v)
	}
	if v, ok := boolFlag(words, "masquerade-all"); ok {
		cfg.MasqueradeAll = v
		used = append(used, fmt.Sprintf("--masquerade-all=%t", v))
	}
	if v, ok := flagValue(words, "cluster-cidr"); ok {
		cfg.ClusterCIDRs = kit.SplitCIDRs(v)
		used = append(used, "--cluster-cidr="+v)
	}
	if v, ok := flagValue(words, "detect-local-mode"); ok && v != "" {
		cfg.DetectLocalMode = v
		used = append(used, "--detect-local-mode="+v)
	}
	if v, ok := flagValue(words, "pod-interface-name-prefix"); ok {
		cfg.InterfaceNamePrefix = v
		used = append(used, "--pod-interface-name-prefix="+v)
	}
	if v, ok := flagValue(words, "pod-bridge-interface"); ok {
		cfg.BridgeInterface = v
		used = append(used, "--pod-bridge-interface="+v)
	}
	if v, ok := boolFlag(words, "iptables-localhost-nodeports"); ok {
		cfg.LocalhostNodePorts = v
		used = append(used, fmt.Sprintf("--iptables-localhost-nodeports=%t", v))
	}
	p.Config, p.Mode = cfg, mode
	if len(used) == 0 {
		p.ConfigFrom = "upstream's defaults (no --config, and no flag that changes them)"
	} else {
		p.ConfigFrom = "the pods' flags " + strings.Join(used, " ") + " over upstream's defaults"
	}
	p.ModeFrom = "the pods' flags (--proxy-mode), else upstream's default"
}

// flagValue is the value of --name (or -name) in words: `--name=value`
// or `--name value`.
func flagValue(words []string, name string) (string, bool) {
	for i, w := range words {
		flag := strings.TrimLeft(w, "-")
		if len(flag) == len(w) {
			continue // not a flag
		}
		if v, ok := strings.CutPrefix(flag, name+"="); ok {
			return v, true
		}
		if flag == name && i+1 < len(words) {
			return words[i+1], true
		}
	}
	return "", false
}

// boolFlag is a boolean flag: `--name` (true) or `--name=value`.
func boolFlag(words []string, name string) (bool, bool) {
	for _, w := range words {
		flag := strings.TrimLeft(w, "-")
		if len(flag) == len(w) {
			continue
		}
		if flag == name {
			return true, true
		}
		if v, ok := strings.CutPrefix(flag, name+"="); ok {
			return v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True", true
		}
	}
	return false, false
}
