// The departures collection of the sample database (README, observation and async access).
let departures = try store.collection("departures")
