-module(t).
-export([main/0]).
%% paths: {StartPos, {Key, Value, [Children]}}
main() ->
  P1 = {1, {<<"root">>, x, [{<<"aaa">>, {leaf,false}, []}]}},
  P2 = {1, {<<"root">>, x, [{<<"ccc">>, x, [{<<"bbb">>, {leaf,true}, []}]}]}},
  P3 = {1, {<<"root">>, x, [{<<"abc">>, {leaf,false}, []}]}},
  {T1, R1} = couch_key_tree:merge([], P1),
  {T2, R2} = couch_key_tree:merge(T1, P2),
  {T3, R3} = couch_key_tree:merge(T2, P3),
  io:format("~p ~p ~p~n~p~n", [R1, R2, R3, T3]),
  io:format("leafs ~p~n", [couch_key_tree:get_all_leafs(T3)]),
  io:format("stem2 ~p~n", [couch_key_tree:stem(T3, 2)]),
  ok.
