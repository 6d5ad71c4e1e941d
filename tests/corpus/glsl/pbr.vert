#version 450
// Metallic-roughness PBR: world position, normal, two UV sets, vertex colour.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in vec2 a_uv0;
layout(location = 3) in vec2 a_uv1;
layout(location = 4) in vec4 a_color;
layout(binding = 0) uniform Node { mat4 model; mat4 view_proj; vec4 base_color; } node;
out vec3 v_pos;
out vec3 v_normal;
out vec2 v_uv0;
out vec2 v_uv1;
out vec4 v_color;
void main() {
    vec4 w = node.model * vec4(a_pos, 1.0);
    v_pos = w.xyz / w.w;
    v_normal = normalize(transpose(mat3(node.model)) * a_normal);
    v_uv0 = a_uv0;
    v_uv1 = a_uv1;
    v_color = a_color * node.base_color;
    gl_Position = node.view_proj * w;
}
