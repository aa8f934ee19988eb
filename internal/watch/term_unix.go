//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package watch

import "golang.org/x/sys/unix"

// termSize is the terminal's width and height in cells, or 0, 0 when it does not say.
func termSize(fd uintptr) (width, height int) {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}
