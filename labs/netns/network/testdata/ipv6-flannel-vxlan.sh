#!/bin/sh
# svclab lab demo (cni flannel-vxlan): what network.Build does, as commands.
set -e
ip netns add svclab-demo.router
ip -n svclab-demo.router link set dev lo alias 'svclab lab=demo role=router'
ip -n svclab-demo.router link set dev lo up
ip netns exec svclab-demo.router sysctl -qw net.ipv6.conf.all.forwarding=1
ip -n svclab-demo.router link add lan0 mtu 1500 type bridge
ip netns exec svclab-demo.router sysctl -qw net.ipv6.conf.lan0.accept_dad=0
ip -n svclab-demo.router addr add fd00::c0a8:1ffe/116 dev lan0 nodad
ip -n svclab-demo.router link set dev lan0 up
ip -n svclab-demo.router link add lan1 mtu 1500 type bridge
ip netns exec svclab-demo.router sysctl -qw net.ipv6.conf.lan1.accept_dad=0
ip -n svclab-demo.router addr add fd00::c0a8:37fe/120 dev lan1 nodad
ip -n svclab-demo.router link set dev lan1 up
ip netns add svclab-demo.hosta
ip -n svclab-demo.hosta link set dev lo alias 'svclab lab=demo role=node'
ip -n svclab-demo.hosta link set dev lo up
ip -n svclab-demo.router link add hosta mtu 1500 type veth peer name eth0 mtu 1500 netns svclab-demo.hosta
ip -n svclab-demo.router link set dev hosta master lan0
ip -n svclab-demo.router link set dev hosta up
ip netns exec svclab-demo.hosta sysctl -qw net.ipv6.conf.eth0.accept_ra=0
ip netns exec svclab-demo.hosta sysctl -qw net.ipv6.conf.eth0.accept_dad=0
ip -n svclab-demo.hosta addr add fd00::c0a8:1049/116 dev eth0 nodad
ip -n svclab-demo.hosta link set dev eth0 up
ip -n svclab-demo.hosta route add default via fd00::c0a8:1ffe dev eth0
ip netns exec svclab-demo.hosta sysctl -qw net.ipv6.conf.all.forwarding=1
ip netns add svclab-demo.hostb
ip -n svclab-demo.hostb link set dev lo alias 'svclab lab=demo role=node'
ip -n svclab-demo.hostb link set dev lo up
ip -n svclab-demo.router link add hostb mtu 1500 type veth peer name eth0 mtu 1500 netns svclab-demo.hostb
ip -n svclab-demo.router link set dev hostb master lan0
ip -n svclab-demo.router link set dev hostb up
ip netns exec svclab-demo.hostb sysctl -qw net.ipv6.conf.eth0.accept_ra=0
ip netns exec svclab-demo.hostb sysctl -qw net.ipv6.conf.eth0.accept_dad=0
ip -n svclab-demo.hostb addr add fd00::c0a8:108b/116 dev eth0 nodad
ip -n svclab-demo.hostb link set dev eth0 up
ip -n svclab-demo.hostb route add default via fd00::c0a8:1ffe dev eth0
ip netns exec svclab-demo.hostb sysctl -qw net.ipv6.conf.all.forwarding=1
ip netns add svclab-demo.client
ip -n svclab-demo.client link set dev lo alias 'svclab lab=demo role=client'
ip -n svclab-demo.client link set dev lo up
ip -n svclab-demo.router link add client mtu 1500 type veth peer name eth0 mtu 1500 netns svclab-demo.client
ip -n svclab-demo.router link set dev client master lan1
ip -n svclab-demo.router link set dev client up
ip netns exec svclab-demo.client sysctl -qw net.ipv6.conf.eth0.accept_ra=0
ip netns exec svclab-demo.client sysctl -qw net.ipv6.conf.eth0.accept_dad=0
ip -n svclab-demo.client addr add fd00::c0a8:37e6/120 dev eth0 nodad
ip -n svclab-demo.client link set dev eth0 up
ip -n svclab-demo.client route add default via fd00::c0a8:37fe dev eth0
ip -n svclab-demo.router route add fd00:10:96::/112 via fd00::c0a8:1049
ip -n svclab-demo.hosta link add cni0 address fe:64:4a:54:8c:30 mtu 1450 type bridge
ip -n svclab-demo.hosta addr add fd00:10:244:28::1/64 dev cni0
ip -n svclab-demo.hosta link set dev cni0 up
ip netns exec svclab-demo.hosta sysctl -qw net.bridge.bridge-nf-call-ip6tables=1
ip -n svclab-demo.hostb link add cni0 address 76:93:78:81:8a:9a mtu 1450 type bridge
ip -n svclab-demo.hostb addr add fd00:10:244:51::1/64 dev cni0
ip -n svclab-demo.hostb link set dev cni0 up
ip netns exec svclab-demo.hostb sysctl -qw net.bridge.bridge-nf-call-ip6tables=1
ip -n svclab-demo.hosta link add flannel-v6.1 address 3e:15:6b:a5:18:5b mtu 1450 type vxlan id 1 local fd00::c0a8:1049 dev eth0 dstport 8472 nolearning
ip -n svclab-demo.hosta addr add fd00:10:244:28::/128 dev flannel-v6.1
ip -n svclab-demo.hosta link set dev flannel-v6.1 up
ip netns exec svclab-demo.hosta sh -c 'while ip -6 addr show dev flannel-v6.1 tentative | grep -q .; do sleep 0.1; done'
ip -n svclab-demo.hosta neigh add fd00:10:244:51:: lladdr 36:28:2f:f8:1e:ed dev flannel-v6.1 nud permanent
bridge -n svclab-demo.hosta fdb add 36:28:2f:f8:1e:ed dev flannel-v6.1 dst fd00::c0a8:108b self permanent
ip -n svclab-demo.hosta route add fd00:10:244:51::/64 via fd00:10:244:51:: dev flannel-v6.1 onlink
ip netns exec svclab-demo.hosta sysctl -qw net.ipv6.conf.flannel-v6.1.accept_ra=0
ip netns exec svclab-demo.hosta ip6tables-restore -w 5 --noflush <<'EOF'
*nat
:FLANNEL-POSTRTG - [0:0]
-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s fd00:10:244:28::/64 -d fd00:10:244::/56 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s fd00:10:244::/56 -d fd00:10:244:28::/64 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG ! -s fd00:10:244::/56 -d fd00:10:244:28::/64 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s fd00:10:244::/56 ! -d ff00::/8 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
-A FLANNEL-POSTRTG ! -s fd00:10:244::/56 -d fd00:10:244::/56 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
COMMIT
*filter
:FLANNEL-FWD - [0:0]
-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
-A FLANNEL-FWD -s fd00:10:244::/56 -m comment --comment "flanneld forward" -j ACCEPT
-A FLANNEL-FWD -d fd00:10:244::/56 -m comment --comment "flanneld forward" -j ACCEPT
COMMIT
EOF
ip -n svclab-demo.hostb link add flannel-v6.1 address 36:28:2f:f8:1e:ed mtu 1450 type vxlan id 1 local fd00::c0a8:108b dev eth0 dstport 8472 nolearning
ip -n svclab-demo.hostb addr add fd00:10:244:51::/128 dev flannel-v6.1
ip -n svclab-demo.hostb link set dev flannel-v6.1 up
ip netns exec svclab-demo.hostb sh -c 'while ip -6 addr show dev flannel-v6.1 tentative | grep -q .; do sleep 0.1; done'
ip -n svclab-demo.hostb neigh add fd00:10:244:28:: lladdr 3e:15:6b:a5:18:5b dev flannel-v6.1 nud permanent
bridge -n svclab-demo.hostb fdb add 3e:15:6b:a5:18:5b dev flannel-v6.1 dst fd00::c0a8:1049 self permanent
ip -n svclab-demo.hostb route add fd00:10:244:28::/64 via fd00:10:244:28:: dev flannel-v6.1 onlink
ip netns exec svclab-demo.hostb sysctl -qw net.ipv6.conf.flannel-v6.1.accept_ra=0
ip netns exec svclab-demo.hostb ip6tables-restore -w 5 --noflush <<'EOF'
*nat
:FLANNEL-POSTRTG - [0:0]
-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s fd00:10:244:51::/64 -d fd00:10:244::/56 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s fd00:10:244::/56 -d fd00:10:244:51::/64 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG ! -s fd00:10:244::/56 -d fd00:10:244:51::/64 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s fd00:10:244::/56 ! -d ff00::/8 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
-A FLANNEL-POSTRTG ! -s fd00:10:244::/56 -d fd00:10:244::/56 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
COMMIT
*filter
:FLANNEL-FWD - [0:0]
-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
-A FLANNEL-FWD -s fd00:10:244::/56 -m comment --comment "flanneld forward" -j ACCEPT
-A FLANNEL-FWD -d fd00:10:244::/56 -m comment --comment "flanneld forward" -j ACCEPT
COMMIT
EOF
# svclab: attach pod poda to node hosta of lab demo
ip netns add svclab-demo.poda
ip -n svclab-demo.poda link set dev lo alias 'svclab lab=demo role=pod node=hosta'
ip -n svclab-demo.poda link set dev lo up
ip -n svclab-demo.poda link add eth0 mtu 1450 type veth peer name veth9b3d8b98 mtu 1450 netns svclab-demo.hosta
ip -n svclab-demo.hosta link set dev veth9b3d8b98 master cni0
bridge -n svclab-demo.hosta link set dev veth9b3d8b98 hairpin on
ip -n svclab-demo.hosta link set dev veth9b3d8b98 up
ip netns exec svclab-demo.poda sysctl -qw net.ipv6.conf.eth0.accept_dad=0
ip -n svclab-demo.poda addr add fd00:10:244:28::2/64 dev eth0
ip -n svclab-demo.poda link set dev eth0 up
ip netns exec svclab-demo.hosta sh -c 'while ip -6 addr show dev cni0 tentative | grep -q .; do sleep 0.1; done'
ip -n svclab-demo.poda route add default via fd00:10:244:28::1 dev eth0
# svclab: attach pod podb to node hostb of lab demo
ip netns add svclab-demo.podb
ip -n svclab-demo.podb link set dev lo alias 'svclab lab=demo role=pod node=hostb'
ip -n svclab-demo.podb link set dev lo up
ip -n svclab-demo.podb link add eth0 mtu 1450 type veth peer name veth32b6ccde mtu 1450 netns svclab-demo.hostb
ip -n svclab-demo.hostb link set dev veth32b6ccde master cni0
bridge -n svclab-demo.hostb link set dev veth32b6ccde hairpin on
ip -n svclab-demo.hostb link set dev veth32b6ccde up
ip netns exec svclab-demo.podb sysctl -qw net.ipv6.conf.eth0.accept_dad=0
ip -n svclab-demo.podb addr add fd00:10:244:51::2/64 dev eth0
ip -n svclab-demo.podb link set dev eth0 up
ip netns exec svclab-demo.hostb sh -c 'while ip -6 addr show dev cni0 tentative | grep -q .; do sleep 0.1; done'
ip -n svclab-demo.podb route add default via fd00:10:244:51::1 dev eth0
