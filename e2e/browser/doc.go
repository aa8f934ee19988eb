// Package browser holds the hub's console tests in Chromium (through chromedp), all behind the slow build tag: the
// board, sign-in, keyboard use, accessibility (axe) and the health view, against the hub run through app.Run and a
// real redis-server. They use the harness of package hubtest and run from the module root.
package browser
