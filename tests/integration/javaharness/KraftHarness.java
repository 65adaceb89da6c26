/*
 * Runs Kafka 4.x's server-side classes over cases read as JSON, for mutepro's differential tests:
 * the KRaft controller's StripedReplicaPlacer and the group coordinator's uniform and range assignors
 * (the new consumer group protocol, KIP-848).
 *
 * stdin: a JSON array of cases, each one of
 *   {"id": "...", "kind": "placement", "seed": 42,
 *    "steps": [{"partitions": 6, "rf": 3, "start": 0,
 *               "brokers": [{"id": 1, "rack": "a", "fenced": false}, ...]}, ...]}
 *      one StripedReplicaPlacer(new Random(seed)) places every step in turn, as a controller does for a
 *      topic created and later grown; brokers are given in the order the describer yields them.
 *   {"id": "...", "kind": "controller", "seed": 42, "partitions": 6, "rf": 3,
 *    "brokers": [{"id": 1014, "rack": "a", "fenced": false}, ...]}
 *      the brokers are registered in this order in a real BrokerHeartbeatManager, and the placer gets them
 *      from its usableBrokers() iterator (HashMap<Integer, ...> order), as a KRaft controller does.
 *   {"id": "...", "kind": "group", "assignor": "uniform" | "range",
 *    "topics": [{"name": "t1", "msb": 1, "lsb": 2, "partitions": 6}, ...],
 *    "members": [{"id": "m1", "instance": null, "rack": "a", "topics": ["t1"],
 *                 "assignment": [{"topic": "t1", "partitions": [0, 1]}]}, ...]}
 *      members are given in join order; as TargetAssignmentBuilder.build does, the member map is filled from
 *      the group's TimelineHashMap of members, then the joiner ("joined_last": true makes the last member the
 *      joiner; false, the default, puts every member in the table). A member in the table gets its
 *      subscription the way the coordinator rebuilds it: GroupCoordinatorRecordHelpers writes its subscription
 *      record and ConsumerGroupMember.Builder.updateWith reads it back; the joiner keeps the list it sent.
 *      Current assignments are built like Assignment.fromRecord (HashMap of topic id -> HashSet).
 * args[0]: output file, one JSON object per line: {"id", "placements": [[[1,2,3], ...], ...]} or
 *   {"id", "assignment": {"m1": {"t1": [0, 1]}}} or {"id", "error": "..."}.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordHelpers;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.metadata.placement.ClusterDescriber;
import org.apache.kafka.metadata.placement.PartitionAssignment;
import org.apache.kafka.metadata.placement.PlacementSpec;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.metadata.placement.TopicAssignment;
import org.apache.kafka.metadata.placement.UsableBroker;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

import java.io.BufferedWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;

public final class KraftHarness {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private KraftHarness() {
    }

    public static void main(String[] args) throws Exception {
        JsonNode cases = MAPPER.readTree(System.in);
        try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            for (JsonNode c : cases) {
                ObjectNode result = MAPPER.createObjectNode();
                result.set("id", c.get("id"));
                try {
                    if ("placement".equals(c.get("kind").asText())) {
                        result.set("placements", place(c));
                    } else if ("controller".equals(c.get("kind").asText())) {
                        result.set("placements", placeThroughController(c));
                    } else {
                        result.set("assignment", assign(c));
                    }
                } catch (Exception | AssertionError e) {
                    result.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                out.write(MAPPER.writeValueAsString(result));
                out.newLine();
            }
        }
    }

    private static String textOrNull(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static ArrayNode place(JsonNode c) {
        StripedReplicaPlacer placer = new StripedReplicaPlacer(new Random(c.get("seed").asLong()));
        ArrayNode steps = MAPPER.createArrayNode();
        for (JsonNode step : c.get("steps")) {
            List<UsableBroker> brokers = new ArrayList<>();
            for (JsonNode b : step.get("brokers")) {
                brokers.add(new UsableBroker(b.get("id").asInt(), Optional.ofNullable(textOrNull(b, "rack")),
                        b.get("fenced").asBoolean()));
            }
            ClusterDescriber describer = new ClusterDescriber() {
                @Override
                public Iterator<UsableBroker> usableBrokers() {
                    return brokers.iterator();
                }

                @Override
                public Uuid defaultDir(int brokerId) {
                    return Uuid.ZERO_UUID;
                }
            };
            TopicAssignment assignment = placer.place(new PlacementSpec(step.get("start").asInt(),
                    step.get("partitions").asInt(), (short) step.get("rf").asInt()), describer);
            ArrayNode partitions = steps.addArray();
            for (PartitionAssignment p : assignment.assignments()) {
                ArrayNode replicas = partitions.addArray();
                p.replicas().forEach(replicas::add);
            }
        }
        return steps;
    }

    /*
     * The brokers as a controller hands them over: registered in the given order in a real
     * BrokerHeartbeatManager (its HashMap<Integer, BrokerHeartbeatState>; package-private, hence reflection),
     * then walked by its usableBrokers() iterator, which ClusterControlManager.usableBrokers and
     * ReplicationControlManager's KRaftClusterDescriber pass to the placer.
     */
    private static ArrayNode placeThroughController(JsonNode c) throws Exception {
        Class<?> managerClass = Class.forName("org.apache.kafka.controller.BrokerHeartbeatManager");
        Constructor<?> constructor = managerClass.getDeclaredConstructor(LogContext.class, Time.class, long.class);
        constructor.setAccessible(true);
        Object manager = constructor.newInstance(new LogContext(), Time.SYSTEM, 18_000_000_000L);
        Method register = managerClass.getDeclaredMethod("register", int.class, boolean.class);
        register.setAccessible(true);
        Method usable = managerClass.getDeclaredMethod("usableBrokers", Function.class, Function.class);
        usable.setAccessible(true);
        Map<Integer, Optional<String>> racks = new HashMap<>();
        for (JsonNode b : c.get("brokers")) {
            int id = b.get("id").asInt();
            racks.put(id, Optional.ofNullable(textOrNull(b, "rack")));
            register.invoke(manager, id, b.get("fenced").asBoolean());
        }
        Function<Integer, Optional<String>> idToRack = racks::get;
        Function<Integer, Boolean> hasUncordonedDirs = id -> true;
        ClusterDescriber describer = new ClusterDescriber() {
            @Override
            @SuppressWarnings("unchecked")
            public Iterator<UsableBroker> usableBrokers() {
                try {
                    return (Iterator<UsableBroker>) usable.invoke(manager, idToRack, hasUncordonedDirs);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }

            @Override
            public Uuid defaultDir(int brokerId) {
                return Uuid.ZERO_UUID;
            }
        };
        StripedReplicaPlacer placer = new StripedReplicaPlacer(new Random(c.get("seed").asLong()));
        TopicAssignment assignment = placer.place(new PlacementSpec(0, c.get("partitions").asInt(),
                (short) c.get("rf").asInt()), describer);
        ArrayNode steps = MAPPER.createArrayNode();
        ArrayNode partitions = steps.addArray();
        for (PartitionAssignment p : assignment.assignments()) {
            ArrayNode replicas = partitions.addArray();
            p.replicas().forEach(replicas::add);
        }
        return steps;
    }

    private static ObjectNode assign(JsonNode c) {
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        for (JsonNode t : c.get("topics")) {
            Uuid id = new Uuid(t.get("msb").asLong(), t.get("lsb").asLong());
            ids.put(t.get("name").asText(), id);
            names.put(id, t.get("name").asText());
            counts.put(id, t.get("partitions").asInt());
        }
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Collections.emptySet();
            }
        };
        Map<String, MemberSubscriptionAndAssignmentImpl> byInput = new LinkedHashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        Set<Set<String>> distinctSubscriptions = new HashSet<>();
        boolean joinedLast = c.has("joined_last") && c.get("joined_last").asBoolean();
        int memberCount = c.get("members").size();
        int position = 0;
        for (JsonNode m : c.get("members")) {
            String memberId = m.get("id").asText();
            List<String> topicList = new ArrayList<>();
            m.get("topics").forEach(t -> topicList.add(t.asText()));
            boolean joining = joinedLast && ++position == memberCount;
            // the joiner's ConsumerGroupMember comes from its heartbeat (names as sent); a member already in
            // the group was rebuilt from its subscription record, written and replayed by Kafka's own code
            ConsumerGroupMember sent = new ConsumerGroupMember.Builder(memberId)
                    .setSubscribedTopicNames(topicList).build();
            ConsumerGroupMember member = joining ? sent : new ConsumerGroupMember.Builder(memberId)
                    .updateWith((ConsumerGroupMemberMetadataValue) GroupCoordinatorRecordHelpers
                            .newConsumerGroupMemberSubscriptionRecord("mutepro", sent).value().message())
                    .build();
            // TopicIds walks the member's HashSet of names and resolves each one
            Set<String> subscribedNames = member.subscribedTopicNames();
            distinctSubscriptions.add(subscribedNames);
            Set<Uuid> subscribedIds = new LinkedHashSet<>();
            for (String name : subscribedNames) {
                if (ids.containsKey(name)) subscribedIds.add(ids.get(name));
            }
            // Assignment.fromRecord: Collectors.toMap (a HashMap) of new HashSet<>(partitions)
            Map<Uuid, Set<Integer>> current = new HashMap<>();
            for (JsonNode tp : m.get("assignment")) {
                Uuid id = ids.get(tp.get("topic").asText());
                List<Integer> parts = new ArrayList<>();
                tp.get("partitions").forEach(p -> parts.add(p.asInt()));
                current.put(id, new HashSet<>(parts));
                for (int p : parts) inverted.computeIfAbsent(id, k -> new HashMap<>()).put(p, memberId);
            }
            byInput.put(memberId, new MemberSubscriptionAndAssignmentImpl(
                    Optional.ofNullable(textOrNull(m, "rack")),
                    Optional.ofNullable(textOrNull(m, "instance")),
                    subscribedIds,
                    new Assignment(current)));
        }
        List<String> joinOrder = new ArrayList<>(byInput.keySet());
        String joiner = joinedLast && !joinOrder.isEmpty() ? joinOrder.remove(joinOrder.size() - 1) : null;
        TimelineHashMap<String, MemberSubscriptionAndAssignmentImpl> table =
                new TimelineHashMap<>(new SnapshotRegistry(new LogContext()), 0);
        for (String id : joinOrder) table.put(id, byInput.get(id));
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
        table.forEach(specs::put);
        if (joiner != null) specs.put(joiner, byInput.get(joiner));
        SubscriptionType type = distinctSubscriptions.size() <= 1
                ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        ConsumerGroupPartitionAssignor assignor = "range".equals(c.get("assignor").asText())
                ? new RangeAssignor() : new UniformAssignor();
        GroupAssignment result = assignor.assign(
                new GroupSpecImpl(Collections.unmodifiableMap(specs), type, inverted), describer);
        ObjectNode out = MAPPER.createObjectNode();
        result.members().forEach((member, assignment) -> {
            ObjectNode topics = out.putObject(member);
            assignment.partitions().forEach((id, parts) -> {
                ArrayNode list = topics.putArray(names.get(id));
                parts.stream().sorted().forEach(list::add);
            });
        });
        return out;
    }
}
