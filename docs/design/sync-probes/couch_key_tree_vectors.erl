%% Generates the golden vectors of Tests/KVDocsTests/Fixtures/couch_key_tree_vectors.jsonl
%% (docs/design/sync.md §5.2) by running CouchDB's own couch_key_tree over random scenarios.
%% KVDocs' harness, not CouchDB code. Run in a session (the fetched couch_key_tree.erl is
%% not committed):
%%   mkdir -p gen/couch/include && cd gen
%%   printf -- '-define(REV_MISSING, []).\n-type branch() :: {Key::term(), Value::term(), Tree::term()}.\n-type path() :: {Start::pos_integer(), branch()}.\n' > couch/include/couch_db.hrl
%%   git -C <couchdb mirror> show HEAD:src/couch/src/couch_key_tree.erl > couch_key_tree.erl
%%   erlc -I . couch_key_tree.erl couch_key_tree_vectors.erl
%%   erl -noshell -s couch_key_tree_vectors main <CouchDB commit> -s init stop > couch_key_tree_vectors.jsonl
%% Values: 'live' and 'dead' (a stored revision, deleted or not) and [] (?REV_MISSING).
%% Keys: short ASCII binaries from a small alphabet, with prefixes of one another, so that
%% ordering, duplicate keys (stem's repair_tree) and bridging merges all occur.
-module(couch_key_tree_vectors).
-export([main/1]).

-define(SCENARIOS, 1200).
-define(KEYS, [<<"a">>, <<"ab">>, <<"b">>, <<"ba">>, <<"c">>, <<"d">>, <<"e">>, <<"f">>]).

main([Commit]) ->
    rand:seed(exsss, {32, 1, 2026}),
    io:format("{\"source\":\"apache/couchdb ~s src/couch/src/couch_key_tree.erl\",\"generator\":\"docs/design/sync-probes/couch_key_tree_vectors.erl\",\"scenarios\":~p}~n",
              [Commit, ?SCENARIOS]),
    lists:foreach(fun(N) -> scenario(N) end, lists:seq(1, ?SCENARIOS)).

pick(List) -> lists:nth(rand:uniform(length(List)), List).

random_value(leaf) -> pick([live, live, live, dead, []]);
random_value(inner) -> pick([[], [], [], [], live, dead]).

%% A random path: {Start, {K, V, [{K, V, [...]}]}}. Small alphabets repeat keys on purpose.
random_path(Keys) ->
    Start = rand:uniform(4),
    Len = rand:uniform(5),
    Ks = [pick(Keys) || _ <- lists:seq(1, Len)],
    {Start, build(Ks)}.

%% A path that overlaps the tree: a window of one of its root-to-leaf paths (so it may
%% start below a root, or above one when extended upwards with new keys), optionally
%% extended below with new keys: what replication mostly sends.
derived_path(Tree, Keys) ->
    {LeafPos, Full} = pick(couch_key_tree:get_all_leafs_full(Tree)),
    Ks = lists:reverse([K || {K, _} <- Full]),
    Top = LeafPos - length(Ks) + 1,
    From = rand:uniform(length(Ks)),
    To = From - 1 + rand:uniform(length(Ks) - From + 1),
    Window = lists:sublist(Ks, From, To - From + 1),
    Above = [pick(Keys) || _ <- lists:seq(1, min(Top + From - 2, pick([0, 0, 0, 1, 2])))],
    Below = [pick(Keys) || _ <- lists:seq(1, pick([0, 0, 1, 1, 2, 3]))],
    All = Above ++ Window ++ Below,
    {Top + From - 1 - length(Above), build(All)}.

build([K]) -> {K, random_value(leaf), []};
build([K | Rest]) -> {K, random_value(inner), [build(Rest)]}.

scenario(N) ->
    %% Some scenarios use few keys (many duplicates), some all of them.
    Keys = lists:sublist(?KEYS, pick([3, 4, 6, 8])),
    Ops = rand:uniform(7) + 1,
    {_, Steps} = lists:foldl(
        fun(_, {Tree, Acc}) ->
            case rand:uniform(4) of
                1 when Tree =/= [] ->
                    Limit = rand:uniform(5),
                    Stemmed = couch_key_tree:stem(Tree, Limit),
                    {Stemmed, [stem_json(Limit, Stemmed) | Acc]};
                R when R =< 3, Tree =/= [] ->
                    Path = derived_path(Tree, Keys),
                    {Merged, Result} = couch_key_tree:merge(Tree, Path),
                    {Merged, [merge_json(Path, Result, Merged) | Acc]};
                _ ->
                    Path = random_path(Keys),
                    {Merged, Result} = couch_key_tree:merge(Tree, Path),
                    {Merged, [merge_json(Path, Result, Merged) | Acc]}
            end
        end,
        {[], []},
        lists:seq(1, Ops)
    ),
    io:format("{\"n\":~p,\"steps\":[~s]}~n", [N, join(lists:reverse(Steps))]).

merge_json({Start, Node}, Result, Tree) ->
    io_lib:format("{\"merge\":{\"start\":~p,\"path\":~s},\"result\":\"~p\",~s}",
                  [Start, path_json(Node), Result, state_json(Tree)]).

stem_json(Limit, Tree) ->
    io_lib:format("{\"stem\":~p,~s}", [Limit, state_json(Tree)]).

%% The tree, its leaves as get_all_leafs gives them, and the winner as
%% couch_doc:to_doc_info_path/1 sorts the leaves.
state_json(Tree) ->
    Leafs = couch_key_tree:get_all_leafs(Tree),
    Infos = [{V =:= dead, {Pos, K}} || {V, {Pos, [K | _]}} <- Leafs],
    Sorted = lists:sort(fun({DA, RA}, {DB, RB}) -> {not DA, RA} > {not DB, RB} end, Infos),
    io_lib:format("\"tree\":~s,\"leaves\":[~s]",
                  [tree_json(Tree), join([rev_json(R, D) || {D, R} <- Sorted])]).

rev_json({Pos, K}, D) -> io_lib:format("[~p,\"~s\",~p]", [Pos, K, D]).

path_json({K, V, []}) -> io_lib:format("[[\"~s\",\"~s\"]]", [K, value(V)]);
path_json({K, V, [Child]}) ->
    "[" ++ io_lib:format("[\"~s\",\"~s\"],", [K, value(V)]) ++ tl(lists:flatten(path_json(Child))).

tree_json(Tree) -> "[" ++ join([io_lib:format("[~p,~s]", [D, node_json(Node)]) || {D, Node} <- Tree]) ++ "]".

node_json({K, V, Children}) ->
    io_lib:format("[\"~s\",\"~s\",[~s]]", [K, value(V), join([node_json(C) || C <- Children])]).

value(live) -> "live";
value(dead) -> "dead";
value([]) -> "missing".

join([]) -> "";
join([X]) -> X;
join([X | Rest]) -> [X, "," | join(Rest)].
