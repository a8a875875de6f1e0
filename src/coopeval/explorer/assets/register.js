/* The one global of the explorer: data scripts call CE.register(key, data), or for an episode
   part CE.registerPacked(key, base64 of the gzip of its JSON), inflated here with the browser's
   DecompressionStream (coopeval.explorer.scripts.write_packed). */
window.CE = {
  store: {},
  waiting: {},
  pending: {},
  registerPacked: function (key, packed) {
    var self = this, raw = atob(packed), bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    self.pending[key] = true;
    new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text().then(function (text) {
      delete self.pending[key];
      self.register(key, JSON.parse(text));
    }).catch(function (err) {
      delete self.pending[key];
      var waiting = self.waiting[key] || [];
      delete self.waiting[key];
      waiting.forEach(function (f) { f[1](new Error(key + ' could not be unpacked: ' + err.message)); });
    });
  },
  register: function (key, data) {
    this.store[key] = data;
    var waiting = this.waiting[key];
    if (waiting) {
      delete this.waiting[key];
      waiting.forEach(function (f) { f[0](data); });
    }
  }
};
