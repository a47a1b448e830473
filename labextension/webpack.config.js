// Natural module ids keep the built remoteEntry byte-identical whatever the
// checkout path is, so the committed build can be checked for freshness.
module.exports = {
  optimization: {
    moduleIds: 'natural'
  }
};
