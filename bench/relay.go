package main

import (
	"net"
	"time"
)

// relay accepts connections on ln and forwards each to target, delaying
// every byte by half of rtt in each direction, so a loopback target looks
// like one across a network with that round trip. The TCP handshake, which
// loopback completes at once, is simulated too: nothing the client sends is
// forwarded before a whole rtt has passed since the connection was
// accepted (the client could not have sent it earlier), then half an rtt
// later. Chunks keep their order and are not held back by each other: a
// chunk is due half an rtt after it was read, whatever is in flight.
func relay(ln net.Listener, target string, rtt time.Duration) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			accepted := time.Now()
			s, err := net.Dial("tcp4", target)
			if err != nil {
				c.Close()
				return
			}
			done := make(chan struct{}, 2)
			go func() { pump(s, c, rtt/2, accepted.Add(rtt)); done <- struct{}{} }()
			go func() { pump(c, s, rtt/2, time.Time{}); done <- struct{}{} }()
			<-done
			<-done
			c.Close()
			s.Close()
		}()
	}
}

type chunk struct {
	data []byte
	due  time.Time
}

// pump copies src to dst, each chunk delay after it was read (and never
// before notBefore + delay), then half-closes dst.
func pump(dst, src net.Conn, delay time.Duration, notBefore time.Time) {
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				at := time.Now()
				if at.Before(notBefore) {
					at = notBefore
				}
				q <- chunk{buf[:n], at.Add(delay)}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for ch := range q {
		if failed {
			continue // drain, so the reader can end
		}
		time.Sleep(time.Until(ch.due))
		if _, err := dst.Write(ch.data); err != nil {
			failed = true
			src.Close()
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
