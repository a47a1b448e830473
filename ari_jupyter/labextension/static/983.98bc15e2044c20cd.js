"use strict";(self.rspackChunkari_jupyter_labextension=self.rspackChunkari_jupyter_labextension||[]).push([[983],{22(r,e,a){var n=a(23),o=a.n(n),t=a(24),i=(a.n(t))()(o());i.push([r.id,`.ari-AllocationStatus {
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
`,""]),a.d(e,{},{A:i})},25(r,e,a){var n=a(23),o=a.n(n),t=a(24),i=(a.n(t))()(o());i.push([r.id,`/* The Runs side panel and the run-phase status item (JupyterLab variables: Light and Dark). */
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
  padding: 2px 2px; /* five columns fit the default side panel width */
  text-align: left;
  border-bottom: 1px solid var(--jp-border-color2);
}

.ari-RunsPanel-table th {
  white-space: nowrap; /* "ジョブ" must not stack one character per line */
}

.ari-RunsPanel-row {
  cursor: pointer;
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
  grid-template-columns: max-content 1fr;
  gap: 2px 8px;
}

.ari-RunsPanel-facts dd {
  margin: 0;
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

.ari-RunsPanel-note,
.ari-RunsPanel-runid,
.ari-RunsPanel-workspace {
  color: var(--jp-ui-font-color2);
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
`,""]),a.d(e,{},{A:i})},24(r){r.exports=function(r){var e=[];return e.toString=function(){return this.map(function(e){var a="",n=void 0!==e[5];return e[4]&&(a+="@supports (".concat(e[4],") {")),e[2]&&(a+="@media ".concat(e[2]," {")),n&&(a+="@layer".concat(e[5].length>0?" ".concat(e[5]):""," {")),a+=r(e),n&&(a+="}"),e[2]&&(a+="}"),e[4]&&(a+="}"),a}).join("")},e.i=function(r,a,n,o,t){"string"==typeof r&&(r=[[null,r,void 0]]);var i={};if(n)for(var s=0;s<this.length;s++){var l=this[s][0];null!=l&&(i[l]=!0)}for(var c=0;c<r.length;c++){var u=[].concat(r[c]);n&&i[u[0]]||(void 0!==t&&(void 0===u[5]||(u[1]="@layer".concat(u[5].length>0?" ".concat(u[5]):""," {").concat(u[1],"}")),u[5]=t),a&&(u[2]&&(u[1]="@media ".concat(u[2]," {").concat(u[1],"}")),u[2]=a),o&&(u[4]?(u[1]="@supports (".concat(u[4],") {").concat(u[1],"}"),u[4]=o):u[4]="".concat(o)),e.push(u))}},e}},23(r){r.exports=function(r){return r[1]}},16(r){var e=[];function a(r){for(var a=-1,n=0;n<e.length;n++)if(e[n].identifier===r){a=n;break}return a}function n(r,n){for(var o={},t=[],i=0;i<r.length;i++){var s=r[i],l=n.base?s[0]+n.base:s[0],c=o[l]||0,u="".concat(l," ").concat(c);o[l]=c+1;var p=a(u),d={css:s[1],media:s[2],sourceMap:s[3],supports:s[4],layer:s[5]};if(-1!==p)e[p].references++,e[p].updater(d);else{var f=function(r,e){var a=e.domAPI(e);return a.update(r),function(e){e?(e.css!==r.css||e.media!==r.media||e.sourceMap!==r.sourceMap||e.supports!==r.supports||e.layer!==r.layer)&&a.update(r=e):a.remove()}}(d,n);n.byIndex=i,e.splice(i,0,{identifier:u,updater:f,references:1})}t.push(u)}return t}r.exports=function(r,o){var t=n(r=r||[],o=o||{});return function(r){r=r||[];for(var i=0;i<t.length;i++){var s=a(t[i]);e[s].references--}for(var l=n(r,o),c=0;c<t.length;c++){var u=a(t[c]);0===e[u].references&&(e[u].updater(),e.splice(u,1))}t=l}}},18(r){var e={};r.exports=function(r,a){var n=function(r){if(void 0===e[r]){var a=document.querySelector(r);if(window.HTMLIFrameElement&&a instanceof window.HTMLIFrameElement)try{a=a.contentDocument.head}catch(r){a=null}e[r]=a}return e[r]}(r);if(!n)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");n.appendChild(a)}},20(r){r.exports=function(r){var e=document.createElement("style");return r.setAttributes(e,r.attributes),r.insert(e,r.options),e}},19(r,e,a){r.exports=function(r){var e=a.nc;e&&r.setAttribute("nonce",e)}},17(r){r.exports=function(r){if("u"<typeof document)return{update:function(){},remove:function(){}};var e=r.insertStyleElement(r);return{update:function(a){var n,o,t;n="",a.supports&&(n+="@supports (".concat(a.supports,") {")),a.media&&(n+="@media ".concat(a.media," {")),(o=void 0!==a.layer)&&(n+="@layer".concat(a.layer.length>0?" ".concat(a.layer):""," {")),n+=a.css,o&&(n+="}"),a.media&&(n+="}"),a.supports&&(n+="}"),(t=a.sourceMap)&&"u">typeof btoa&&(n+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(t))))," */")),r.styleTagTransform(n,e,r.options)},remove:function(){var r;null===(r=e).parentNode||r.parentNode.removeChild(r)}}}},21(r){r.exports=function(r,e){if(e.styleSheet)e.styleSheet.cssText=r;else{for(;e.firstChild;)e.removeChild(e.firstChild);e.appendChild(document.createTextNode(r))}}},15(r,e,a){var n=a(16),o=a.n(n),t=a(17),i=a.n(t),s=a(18),l=a.n(s),c=a(19),u=a.n(c),p=a(20),d=a.n(p),f=a(21),h=a.n(f),v=a(22),m={};m.styleTagTransform=h(),m.setAttributes=u(),m.insert=l().bind(null,"head"),m.domAPI=i(),m.insertStyleElement=d(),o()(v.A,m),v.A&&v.A.locals&&v.A.locals;var g=a(25),b={};b.styleTagTransform=h(),b.setAttributes=u(),b.insert=l().bind(null,"head"),b.domAPI=i(),b.insertStyleElement=d(),o()(g.A,b),g.A&&g.A.locals&&g.A.locals}}]);