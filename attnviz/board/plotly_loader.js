// plotly.js, loaded once per browser tab and shared by every board of every page.
//
// The file is the plotly.min.js of the installed plotly Python package, served beside this
// module (attnviz/board/vendor/plotly-<version>.min.js, see attnviz/board_assets.py) at a
// content-versioned URL (?v=<digest>). A page switch in Streamlit keeps the document, so
// this module (an ES module: one instance per tab) and window.Plotly stay: the second
// board, and every board of the next page, reuse the promise below and fetch nothing.

let loading = null;

/** Resolves to window.Plotly, loading `src` (relative to this module) the first time. */
export function loadPlotly(src, name) {
  const want = /plotly-(.+)\.min\.js/.exec(name || "");
  const version = want ? want[1] : null;
  if (window.Plotly && (!version || window.Plotly.version === version)) {
    return Promise.resolve(window.Plotly);
  }
  if (loading) return loading;
  const url = new URL(src, import.meta.url).href;
  loading = new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = url;
    script.async = true;
    script.dataset.attnviz = "plotly";
    script.onload = () => {
      const P = window.Plotly;
      if (!P) reject(new Error(`expected window.Plotly after loading ${url}, found none`));
      else if (version && P.version !== version)
        reject(new Error(`expected plotly.js v${version} from ${url}, got v${P.version}`));
      else resolve(P);
    };
    script.onerror = () => {
      loading = null; // a later board may try again (e.g. the server was restarting)
      script.remove();
      reject(new Error(`plotly.js could not be loaded from ${url}`));
    };
    document.head.appendChild(script);
  });
  return loading;
}
