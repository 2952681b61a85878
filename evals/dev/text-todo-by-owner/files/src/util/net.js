// TODO(bob): retry on timeout
// TODO(Alice): add a user agent
function get(url) { return fetch(url); }
