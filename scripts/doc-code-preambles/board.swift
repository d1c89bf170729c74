// A departures board in an app's UI: it shows the documents it is given.
struct Board { func show(_ departures: [JSONValue]) {} }
let board = Board()
