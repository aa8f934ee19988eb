// Package js holds the hub's JavaScript client (hubclient.js, an npm package in this directory) so that the hub can
// serve the very files the npm package ships: the console imports them from /client/, and there is one copy.
//
// A go:embed pattern cannot reach outside its package's directory, hence this file here rather than in web/. It
// embeds only the module files the browser loads, never node_modules or the tests.
package js

import "embed"

// FS holds the modules (hubclient.js, ids.js, request.js) and hubclient.d.ts at its root. It never changes, so it is safe for concurrent use.
//
//go:embed hubclient.js ids.js request.js hubclient.d.ts
var FS embed.FS
