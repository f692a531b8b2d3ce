package config

import (
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubeproxyconfigv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	strictjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Where kubeadm keeps kube-proxy's configuration.
const (
	ConfigMapNamespace = "kube-system"
	ConfigMapName      = "kube-proxy"
	ConfigMapKey       = "config.conf"
)

// The apiVersion and kind the document must declare.
const (
	APIVersion = "kubeproxy.config.k8s.io/v1alpha1"
	Kind       = "KubeProxyConfiguration"
)

// MaxBytes bounds a configuration document: a ConfigMap holds at most
// 1 MiB of data (corev1.MaxSecretSize), so a larger config.conf cannot be
// one kube-proxy would read.
const MaxBytes = corev1.MaxSecretSize

// FromConfigMap reads the ConfigMapKey entry of cm (normally
// kube-system/kube-proxy). Errors name the ConfigMap and key as their source:
// "kube-system/kube-proxy config.conf: ...".
func FromConfigMap(cm *corev1.ConfigMap) (Config, error) {
	if cm == nil {
		return Config{}, errors.New("kube-proxy ConfigMap: none given")
	}
	source := fmt.Sprintf("%s/%s %s", cm.Namespace, cm.Name, ConfigMapKey)
	data, ok := cm.Data[ConfigMapKey]
	if !ok {
		return Config{}, &Error{Source: fmt.Sprintf("%s/%s", cm.Namespace, cm.Name),
			Reason: fmt.Sprintf("no %q key in the ConfigMap's data", ConfigMapKey)}
	}
	return Parse(source, []byte(data))
}

// Parse reads a KubeProxyConfiguration YAML (or JSON) document. source names
// it in errors (a file path, or "kube-system/kube-proxy config.conf").
//
// Decoding is strict: malformed YAML, unknown or duplicated fields, a wrong
// apiVersion or kind and invalid values are all errors; several problems are
// joined with errors.Join, each an *Error.
func Parse(source string, data []byte) (Config, error) {
	if len(data) > MaxBytes {
		return Config{}, &Error{Source: source, Reason: fmt.Sprintf("larger than %d bytes, the most a ConfigMap holds", MaxBytes)}
	}
	kp, err := decodeStrict(source, data)
	if err != nil {
		return Config{}, err
	}
	applyDefaults(kp)
	return convert(source, kp)
}

// Default is the Config of a document that sets nothing but apiVersion and
// kind: upstream's defaults in the default mode.
func Default() Config {
	kp := &kubeproxyconfigv1alpha1.KubeProxyConfiguration{}
	kp.APIVersion, kp.Kind = APIVersion, Kind
	applyDefaults(kp)
	c, err := convert("defaults", kp)
	if err != nil {
		panic("proxy/config: upstream defaults do not validate: " + err.Error())
	}
	return c
}

// decodeStrict turns YAML into the versioned type, refusing anything
// upstream's strict codec would refuse.
func decodeStrict(source string, data []byte) (*kubeproxyconfigv1alpha1.KubeProxyConfiguration, error) {
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, &Error{Source: source, Reason: "malformed YAML: " + err.Error()}
	}
	if err := checkDurations(source, jsonData); err != nil {
		return nil, err
	}
	kp := &kubeproxyconfigv1alpha1.KubeProxyConfiguration{}
	strictErrs, err := strictjson.UnmarshalStrict(jsonData, kp)
	if err != nil {
		return nil, &Error{Source: source, Reason: "cannot decode: " + err.Error()}
	}
	var errs []error
	for _, se := range strictErrs {
		var fe strictjson.FieldError
		if errors.As(se, &fe) {
			// se reads `unknown field "a.b"` or `duplicate field "a.b"`.
			reason, _, _ := strings.Cut(se.Error(), ` "`)
			errs = append(errs, &Error{Source: source, Field: fe.FieldPath(), Reason: reason})
			continue
		}
		errs = append(errs, &Error{Source: source, Reason: se.Error()})
	}
	if kp.APIVersion != APIVersion {
		errs = append(errs, &Error{Source: source, Field: "apiVersion", Value: kp.APIVersion,
			Reason: missingOrWrong(kp.APIVersion) + " (want " + APIVersion + ")"})
	}
	if kp.Kind != Kind {
		errs = append(errs, &Error{Source: source, Field: "kind", Value: kp.Kind,
			Reason: missingOrWrong(kp.Kind) + " (want " + Kind + ")"})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return kp, nil
}

func missingOrWrong(v string) string {
	if v == "" {
		return "missing"
	}
	return "wrong"
}
