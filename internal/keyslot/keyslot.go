// Package keyslot computes the Redis Cluster slot of a key, as CLUSTER KEYSLOT does: one copy for the subscriber's
// grouping by slot, the test rigs and the fleet bench. It imports nothing of the hub's, so any of them can use it.
package keyslot

import "strings"

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// Of is the slot of key: CRC16 (XMODEM) of its hash tag, the part between the first { and the next } when that is
// not empty, or of the whole key otherwise, modulo 16384.
func Of(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc % Slots)
}
