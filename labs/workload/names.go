package workload

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// safeAlphabet is the alphabet Kubernetes uses for generated name suffixes
// (k8s.io/apimachinery/pkg/util/rand): no vowels, no look-alike characters.
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// safeEncode maps every byte of s to the safe alphabet, as rand.SafeEncodeString.
func safeEncode(s string) string {
	r := []byte(s)
	for i, b := range r {
		r[i] = safeAlphabet[int(b)%len(safeAlphabet)]
	}
	return string(r)
}

// hashOf is the pod-template-hash way of naming things: FNV-32a of the
// object's JSON, printed in decimal and safe-encoded.
func hashOf(v any) string {
	h := fnv.New32a()
	data, _ := json.Marshal(v)
	h.Write(data)
	return safeEncode(fmt.Sprint(h.Sum32()))
}

// randomSuffix is the 5-character suffix the ReplicaSet controller gives pods.
func randomSuffix() string {
	b := make([]byte, 5)
	for i := range b {
		b[i] = safeAlphabet[rand.IntN(len(safeAlphabet))]
	}
	return string(b)
}
