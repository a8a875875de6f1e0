/* The one global of the explorer: data scripts call CE.register(key, data). */
window.CE = {
  store: {},
  waiting: {},
  register: function (key, data) {
    this.store[key] = data;
    var waiting = this.waiting[key];
    if (waiting) {
      delete this.waiting[key];
      waiting.forEach(function (f) { f[0](data); });
    }
  }
};
