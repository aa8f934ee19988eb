// Package progress draws the one status line a long command (dispatch-test, hub-bench) keeps up to date on a
// terminal: redrawn in place with a carriage return, and erased when it stops so that the report which follows starts
// on a clean line. Given no writer (not a terminal, or --json) it draws nothing at all.
//
// A Line owns one goroutine, which Stop waits for; the text function is called from it and must be safe to call
// while the run updates what it reads.
package progress
