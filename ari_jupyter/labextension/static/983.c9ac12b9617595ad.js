"use strict";(self.rspackChunkari_jupyter_labextension=self.rspackChunkari_jupyter_labextension||[]).push([[983],{22(a,r,e){var n=e(23),o=e.n(n),t=e(24),i=(e.n(t))()(o());i.push([a.id,`.ari-AllocationStatus {
  display: flex;
  align-items: center;
  padding: 0 var(--jp-ui-font-size0, 4px);
  font-size: var(--jp-ui-font-size1);
  color: var(--jp-ui-font-color1);
  white-space: nowrap;
}

.ari-AllocationStatus.ari-mod-warn {
  color: var(--jp-warn-color0, #b26a00);
  font-weight: 600;
}

/* a demo site's recorded allocation: marked, so it is never read as the real one */
.ari-AllocationStatus.ari-mod-demo {
  font-style: italic;
  border: 1px dashed var(--jp-border-color1);
  border-radius: 2px;
}
`,""]),e.d(r,{},{A:i})},25(a,r,e){var n=e(23),o=e.n(n),t=e(24),i=(e.n(t))()(o());i.push([a.id,`/* The Runs side panel and the run-phase status item (JupyterLab variables: Light and Dark). */
.ari-RunsPanel {
  overflow: auto;
  padding: 8px 6px;
  color: var(--jp-ui-font-color1);
  background: var(--jp-layout-color1);
  font-size: var(--jp-ui-font-size1);
}

.ari-RunsPanel-header {
  display: flex;
  align-items: center;
  gap: 8px;
}

.ari-RunsPanel-header h2 {
  flex: 1;
  margin: 0;
  font-size: var(--jp-ui-font-size2);
}

.ari-RunsPanel-table {
  width: 100%;
  border-collapse: collapse;
}

.ari-RunsPanel-table th,
.ari-RunsPanel-table td {
  padding: 2px 3px;
  text-align: left;
  border-bottom: 1px solid var(--jp-border-color2);
}

.ari-RunsPanel-table th {
  white-space: nowrap; /* "ジョブ" must not stack one character per line */
}

.ari-RunsPanel-row {
  cursor: pointer;
}

/* A run id is one long word: it wraps rather than pushing the Jobs column past the edge. */
.ari-RunsPanel-table td.ari-RunsPanel-title,
.ari-RunsPanel-table td.ari-RunsPanel-best {
  overflow-wrap: anywhere;
}

.ari-RunsPanel-table td {
  vertical-align: top;
}

.ari-RunsPanel-started {
  color: var(--jp-ui-font-color2);
  font-size: var(--jp-ui-font-size0);
  white-space: nowrap;
}

.ari-RunsPanel-row:hover,
.ari-RunsPanel-row:focus {
  background: var(--jp-layout-color2);
}

.ari-RunPhase {
  white-space: nowrap; /* a CJK phase word must not break one character per line */
  padding: 0 3px;
  border-radius: 3px;
  background: var(--jp-layout-color3);
}

/* The coloured badges are JupyterLab's light (100) shades in Light and Dark alike, so their
   text is dark in both themes: Dark's white text on them could hardly be read. */
.ari-RunPhase.ari-mod-starting,
.ari-RunPhase.ari-mod-exploring,
.ari-RunPhase.ari-mod-paper,
.ari-RunPhase.ari-mod-reproduce,
.ari-RunPhase.ari-mod-finished,
.ari-RunPhase.ari-mod-failed,
.ari-RunPhase.ari-mod-interrupted {
  color: var(--md-grey-900, #212121);
}

.ari-RunPhase.ari-mod-starting,
.ari-RunPhase.ari-mod-exploring,
.ari-RunPhase.ari-mod-paper,
.ari-RunPhase.ari-mod-reproduce {
  background: var(--jp-brand-color3);
}

.ari-RunPhase.ari-mod-finished {
  background: var(--jp-success-color3);
}

.ari-RunPhase.ari-mod-failed,
.ari-RunPhase.ari-mod-interrupted {
  background: var(--jp-error-color3);
}

.ari-RunsPanel-facts {
  display: grid;
  /* minmax(0, ...): a long value (a node id, "1 running") wraps inside the side panel instead
     of running past its edge */
  grid-template-columns: max-content minmax(0, 1fr);
  gap: 2px 8px;
}

.ari-RunsPanel-facts dd {
  margin: 0;
  min-width: 0;
  overflow-wrap: anywhere;
}

/* a finding's fix holds a command with a checkpoint path: it wraps inside the side panel */
.ari-RunsPanel-findings li {
  overflow-wrap: anywhere;
  min-width: 0;
}

.ari-RunsPanel-findings li.ari-mod-error {
  color: var(--jp-error-color1);
}

.ari-RunsPanel-findings li.ari-mod-warning {
  color: var(--jp-warn-color1);
}

.ari-RunsPanel-fix {
  color: var(--jp-ui-font-color2);
}

.ari-RunsPanel-findings code {
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  background: var(--jp-layout-color2);
  color: var(--jp-content-font-color1);
  padding: 0 2px;
  word-break: break-all;
}

.ari-RunsPanel-log,
.ari-RunsPanel-jobtail {
  max-height: 24em;
  overflow: auto;
  padding: 4px;
  white-space: pre-wrap;
  word-break: break-all;
  font-family: var(--jp-code-font-family);
  font-size: var(--jp-code-font-size);
  background: var(--jp-layout-color2);
}

.ari-RunsPanel-job {
  margin: 4px 0;
  padding: 4px;
  border: 1px solid var(--jp-border-color2);
}

.ari-RunsPanel-error {
  color: var(--jp-error-color1);
}

/* What ARI's submission ledger recorded of a job: its request and handle, under the job's line */
.ari-RunsPanel-recorded,
.ari-RunsPanel-handle {
  color: var(--jp-ui-font-color1);
  font-size: var(--jp-ui-font-size0);
  overflow-wrap: anywhere;
}

.ari-RunsPanel-forgotten {
  font-style: italic;
}

.ari-RunsPanel-note,
.ari-RunsPanel-runid,
.ari-RunsPanel-workspace {
  color: var(--jp-ui-font-color2);
}

/* A run id or a path is one long word: it wraps in a narrow panel rather than being cut. */
.ari-RunsPanel-runid,
.ari-RunsPanel-workspace {
  overflow-wrap: anywhere;
}

.ari-RunsPanel-actions {
  display: flex;
  gap: 8px;
  margin: 8px 0;
}

.ari-RunPhaseStatus {
  padding: 0 5px;
  line-height: 24px;
}

.ari-RunsPanel-actions {
  flex-wrap: wrap;
}

.ari-RunsPanel-button {
  height: auto;
  min-height: 24px;
  white-space: normal;
  line-height: 1.3;
}

.ari-RunsPanel-workspace {
  overflow-wrap: anywhere; /* a long path wraps instead of widening the panel */
}

/* "All runs" over several workspaces: a heading row per workspace, its runs under it */
.ari-RunsPanel-grouphead th {
  text-align: left;
  font-weight: 600;
  padding-top: 8px;
  background: var(--jp-layout-color2);
  overflow-wrap: anywhere;
}
.ari-RunsPanel-groupcount {
  font-weight: normal;
  color: var(--jp-ui-font-color2);
}
.ari-RunsPanel-forget {
  font-size: var(--jp-ui-font-size0);
  margin-left: 4px;
}
`,""]),e.d(r,{},{A:i})},24(a){a.exports=function(a){var r=[];return r.toString=function(){return this.map(function(r){var e="",n=void 0!==r[5];return r[4]&&(e+="@supports (".concat(r[4],") {")),r[2]&&(e+="@media ".concat(r[2]," {")),n&&(e+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),e+=a(r),n&&(e+="}"),r[2]&&(e+="}"),r[4]&&(e+="}"),e}).join("")},r.i=function(a,e,n,o,t){"string"==typeof a&&(a=[[null,a,void 0]]);var i={};if(n)for(var s=0;s<this.length;s++){var l=this[s][0];null!=l&&(i[l]=!0)}for(var u=0;u<a.length;u++){var p=[].concat(a[u]);n&&i[p[0]]||(void 0!==t&&(void 0===p[5]||(p[1]="@layer".concat(p[5].length>0?" ".concat(p[5]):""," {").concat(p[1],"}")),p[5]=t),e&&(p[2]&&(p[1]="@media ".concat(p[2]," {").concat(p[1],"}")),p[2]=e),o&&(p[4]?(p[1]="@supports (".concat(p[4],") {").concat(p[1],"}"),p[4]=o):p[4]="".concat(o)),r.push(p))}},r}},23(a){a.exports=function(a){return a[1]}},16(a){var r=[];function e(a){for(var e=-1,n=0;n<r.length;n++)if(r[n].identifier===a){e=n;break}return e}function n(a,n){for(var o={},t=[],i=0;i<a.length;i++){var s=a[i],l=n.base?s[0]+n.base:s[0],u=o[l]||0,p="".concat(l," ").concat(u);o[l]=u+1;var d=e(p),c={css:s[1],media:s[2],sourceMap:s[3],supports:s[4],layer:s[5]};if(-1!==d)r[d].references++,r[d].updater(c);else{var f=function(a,r){var e=r.domAPI(r);return e.update(a),function(r){r?(r.css!==a.css||r.media!==a.media||r.sourceMap!==a.sourceMap||r.supports!==a.supports||r.layer!==a.layer)&&e.update(a=r):e.remove()}}(c,n);n.byIndex=i,r.splice(i,0,{identifier:p,updater:f,references:1})}t.push(p)}return t}a.exports=function(a,o){var t=n(a=a||[],o=o||{});return function(a){a=a||[];for(var i=0;i<t.length;i++){var s=e(t[i]);r[s].references--}for(var l=n(a,o),u=0;u<t.length;u++){var p=e(t[u]);0===r[p].references&&(r[p].updater(),r.splice(p,1))}t=l}}},18(a){var r={};a.exports=function(a,e){var n=function(a){if(void 0===r[a]){var e=document.querySelector(a);if(window.HTMLIFrameElement&&e instanceof window.HTMLIFrameElement)try{e=e.contentDocument.head}catch(a){e=null}r[a]=e}return r[a]}(a);if(!n)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");n.appendChild(e)}},20(a){a.exports=function(a){var r=document.createElement("style");return a.setAttributes(r,a.attributes),a.insert(r,a.options),r}},19(a,r,e){a.exports=function(a){var r=e.nc;r&&a.setAttribute("nonce",r)}},17(a){a.exports=function(a){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=a.insertStyleElement(a);return{update:function(e){var n,o,t;n="",e.supports&&(n+="@supports (".concat(e.supports,") {")),e.media&&(n+="@media ".concat(e.media," {")),(o=void 0!==e.layer)&&(n+="@layer".concat(e.layer.length>0?" ".concat(e.layer):""," {")),n+=e.css,o&&(n+="}"),e.media&&(n+="}"),e.supports&&(n+="}"),(t=e.sourceMap)&&"u">typeof btoa&&(n+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(t))))," */")),a.styleTagTransform(n,r,a.options)},remove:function(){var a;null===(a=r).parentNode||a.parentNode.removeChild(a)}}}},21(a){a.exports=function(a,r){if(r.styleSheet)r.styleSheet.cssText=a;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(a))}}},15(a,r,e){var n=e(16),o=e.n(n),t=e(17),i=e.n(t),s=e(18),l=e.n(s),u=e(19),p=e.n(u),d=e(20),c=e.n(d),f=e(21),h=e.n(f),v=e(22),m={};m.styleTagTransform=h(),m.setAttributes=p(),m.insert=l().bind(null,"head"),m.domAPI=i(),m.insertStyleElement=c(),o()(v.A,m),v.A&&v.A.locals&&v.A.locals;var g=e(25),w={};w.styleTagTransform=h(),w.setAttributes=p(),w.insert=l().bind(null,"head"),w.domAPI=i(),w.insertStyleElement=c(),o()(g.A,w),g.A&&g.A.locals&&g.A.locals}}]);