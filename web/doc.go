// Package web is the browser UI Keeper serves at /: server-rendered HTML
// pages (html/template, embedded with the CSS and JavaScript they use) for
// people who supervise what agents wrote.
//
// Every page gets its data by calling Keeper's own JSON API in process,
// through the API's http.Handler, with the signed-in token as its bearer
// token: the UI sees exactly what the token may see and may do exactly
// what the token may do, under the API's validation and problem documents.
//
// Sign-in keeps the token itself in an HttpOnly, SameSite=Strict cookie
// (Secure over TLS or when Options.SecureCookies is set): no session state
// lives in Keeper, so any Keeper behind a load balancer serves any page, and
// a revoked token stops working in the UI as soon as the API refuses it.
// Every form that changes state carries a CSRF token, an HMAC keyed by the
// session's token; a form without it is refused with 403 before anything
// reaches the API.
//
// The pages decode the API's answers into the Go client's types (package
// client), so the API's JSON has one set of Go types.
//
// Reading pages work without JavaScript. static/app.js adds the
// neighborhood graph (a canvas laid out and painted by a Web Worker,
// static/graph-worker.js, so the page's thread never paints), live branch
// job and Domain deletion progress and confirmations.
//
// The bootstrap admin's Domains page deletes a Domain once the person has
// typed its name (a plain form post, CSRF-checked; a name that does not
// match deletes nothing); the Domain then shows as deleting with its job's
// progress until it is gone.
package web
