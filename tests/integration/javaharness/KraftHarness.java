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
 *   {"id": "...", "kind": "group", "assignor": "uniform" | "range",
 *    "topics": [{"name": "t1", "msb": 1, "lsb": 2, "partitions": 6}, ...],
 *    "members": [{"id": "m1", "instance": null, "rack": "a", "topics": ["t1"],
 *                 "assignment": [{"topic": "t1", "partitions": [0, 1]}]}, ...]}
 *      members are given in join order; as TargetAssignmentBuilder.build does, the member map is filled from
 *      the group's TimelineHashMap of members, then the joiner ("joined_last": true, the default, makes the
 *      last member the joiner; false puts every member in the table). Subscriptions and current assignments
 *      are built the way the coordinator builds them (HashSet of names -> topic ids; Assignment.fromRecord).
 * args[0]: output file, one JSON object per line: {"id", "placements": [[[1,2,3], ...], ...]} or
 *   {"id", "assignment": {"m1": {"t1": [0, 1]}}} or {"id", "error": "..."}.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.metadata.placement.ClusterDescriber;
import org.apache.kafka.metadata.placement.PartitionAssignment;
import org.apache.kafka.metadata.placement.PlacementSpec;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.metadata.placement.TopicAssignment;
import org.apache.kafka.metadata.placement.UsableBroker;
import org.apache.kafka.timeline.SnapshotRegistry;
import org.apache.kafka.timeline.TimelineHashMap;

import java.io.BufferedWriter;
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
        for (JsonNode m : c.get("members")) {
            String memberId = m.get("id").asText();
            List<String> topicList = new ArrayList<>();
            m.get("topics").forEach(t -> topicList.add(t.asText()));
            // ConsumerGroupMember keeps new HashSet<>(list); TopicIds walks it and resolves each name
            Set<String> subscribedNames = new HashSet<>(topicList);
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
        boolean joinedLast = !c.has("joined_last") || c.get("joined_last").asBoolean();
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
