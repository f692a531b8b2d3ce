package kube

import "testing"

// TestProcIPVSText: /proc/net/ip_vs reads as ipvsadm -Ln writes it, the
// addresses and ports decoded, the headings and other words kept.
func TestProcIPVSText(t *testing.T) {
	proc := "IP Virtual Server version 1.2.1 (size=4096)\n" +
		"Prot LocalAddress:Port Scheduler Flags\n" +
		"  -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n" +
		"TCP  0A600001:01BB rr\n" +
		"  -> AC120002:192B      Masq    1      0          0\n" +
		"UDP  0A60000A:0035 rr persistent 10800\n"
	want := "IP  Virtual  Server  version  1.2.1  (size=4096)\n" +
		"Prot  LocalAddress:Port  Scheduler  Flags\n" +
		"  ->  RemoteAddress:Port  Forward  Weight  ActiveConn  InActConn\n" +
		"TCP  10.96.0.1:443  rr\n" +
		"  ->  172.18.0.2:6443  Masq  1  0  0\n" +
		"UDP  10.96.0.10:53  rr  persistent  10800\n"
	if got := procIPVSText(proc); got != want {
		t.Errorf("procIPVSText:\n%s\nwant:\n%s", got, want)
	}
	for _, bad := range []string{"0A60001:01BB", "0A600001:1BB", "ZZ600001:01BB", "0A600001"} {
		if _, ok := hexAddrPort(bad); ok {
			t.Errorf("hexAddrPort(%q) read an address", bad)
		}
	}
}
