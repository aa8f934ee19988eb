package rig

import (
	"errors"
	"net"
	"strconv"
)

// LoopbackAddr returns a loopback address (127.0.0.1:port) whose port was free a moment ago.
func LoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// FreeBusAddr is LoopbackAddr for a Redis Cluster node: port+10000, its cluster bus, was free a moment ago too.
func FreeBusAddr() (string, error) {
	for range 50 {
		a, err := LoopbackAddr()
		if err != nil {
			return "", err
		}
		port, _ := strconv.Atoi(a[len("127.0.0.1:"):])
		if port+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			_ = bus.Close()
			return a, nil
		}
	}
	return "", errors.New("no free port with a free cluster bus port")
}
